package client

import (
	"context"
	"io"
	"time"

	"github.com/parityhpc/parity/scheduler/client/clientenv"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
)

// routedStream is a stream on the believed leader. A follower's refusal
// comes with the stream's first answer, after the request was sent: until
// a first message arrives the stream keeps what it sent, and a refusal
// then opens it again where the router points and sends it all again.
type routedStream struct {
	r      *router
	ctx    context.Context
	desc   *grpc.StreamDesc
	method string
	opts   []grpc.CallOption

	cur      grpc.ClientStream
	deadline time.Time // set at the first refusal
	backoff  time.Duration
	pace     pacer
	sent     []any
	closed   bool // CloseSend was called
	answered bool // a message arrived: no more redirects
}

func (s *routedStream) open() error {
	return s.r.retry(s.ctx, func(cc *grpc.ClientConn) (metadata.MD, error) {
		cs, err := cc.NewStream(s.ctx, s.desc, s.method, s.opts...)
		if err != nil {
			return nil, err
		}
		for _, m := range s.sent {
			if err := cs.SendMsg(m); err != nil && err != io.EOF {
				return nil, err
			}
		}
		if s.closed {
			if err := cs.CloseSend(); err != nil {
				return nil, err
			}
		}
		s.cur = cs
		return nil, nil
	})
}

func (s *routedStream) SendMsg(m any) error {
	if !s.answered {
		s.sent = append(s.sent, m)
	}
	return s.cur.SendMsg(m)
}

func (s *routedStream) CloseSend() error {
	s.closed = true
	return s.cur.CloseSend()
}

func (s *routedStream) RecvMsg(m any) error {
	for {
		err := s.cur.RecvMsg(m)
		if err == nil {
			s.answered, s.sent = true, nil
			return nil
		}
		if s.answered || !redirectable(err) || s.ctx.Err() != nil {
			return err
		}
		if s.deadline.IsZero() {
			s.deadline, s.backoff = time.Now().Add(s.r.budget), 20*time.Millisecond
			s.pace = pacer{addrs: len(s.r.addrs)}
		}
		if time.Now().After(s.deadline) {
			return err
		}
		i := int(s.r.cur.Load())
		n := s.r.next(i, s.cur.Trailer())
		if s.pace.attempt() || n == i {
			if werr := clientenv.Sleep(s.ctx, s.backoff); werr != nil {
				return err
			}
			s.backoff = min(2*s.backoff, 500*time.Millisecond)
		}
		s.r.cur.Store(int32(n))
		if oerr := s.open(); oerr != nil {
			return oerr
		}
	}
}

func (s *routedStream) Header() (metadata.MD, error) { return s.cur.Header() }
func (s *routedStream) Trailer() metadata.MD         { return s.cur.Trailer() }
func (s *routedStream) Context() context.Context     { return s.cur.Context() }
