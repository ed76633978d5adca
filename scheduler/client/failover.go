package client

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/parityhpc/parity/scheduler/api"
	"github.com/parityhpc/parity/scheduler/client/clientenv"
)

// Several controllers: the address is a comma-separated list
// ("a:6817,b:6817,c:6817", as PARITY_CONTROLLER or --controller). Every
// call goes to the controller believed to lead; one that answers
// Unavailable (a follower naming the leader, a controller down, an
// election) is retried on the leader it named, else on the next address,
// with backoff, until FailoverBudget has passed or the call's context
// ends. Submissions carry an idempotency key, so one retried after its
// answer was lost creates no second job.

// FailoverBudget is how long a call keeps looking for a leader.
const FailoverBudget = clientenv.FailoverBudget

// splitAddrs reads a controllers' list; one address is a list of one.
func splitAddrs(addr string) []string { return clientenv.SplitControllers(addr) }

// router sends each call to the believed leader among conns.
type router struct {
	addrs  []string
	conns  []*grpc.ClientConn
	cur    atomic.Int32
	budget time.Duration
}

func dialRouter(addrs []string, opts []grpc.DialOption) (*router, error) {
	r := &router{addrs: addrs, budget: FailoverBudget}
	for _, a := range addrs {
		cc, err := grpc.NewClient(a, opts...)
		if err != nil {
			r.close()
			return nil, fmt.Errorf("client: dial %s: %w", a, err)
		}
		r.conns = append(r.conns, cc)
	}
	return r, nil
}

func (r *router) close() error {
	var first error
	for _, cc := range r.conns {
		if err := cc.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// redirectable is a refusal or failure that another controller may not
// give: the call did not happen here (a follower), or could not (down).
func redirectable(err error) bool { return status.Code(err) == codes.Unavailable }

// next picks where to go after a refusal from controller i: the leader it
// named, else the next address.
func (r *router) next(i int, trailer metadata.MD) int {
	if hint := trailer.Get(api.LeaderMetadataKey); len(hint) > 0 {
		if j := slices.Index(r.addrs, hint[0]); j >= 0 && j != i {
			return j
		}
	}
	return (i + 1) % len(r.addrs)
}

// pacer says when a search for the leader backs off: after as many
// attempts as there are controllers, however they went. Counting rounds
// by address would not do: a follower still naming a dead leader sends
// the search back and forth between the two, never round the list.
type pacer struct{ addrs, tries int }

// attempt counts one refused attempt and reports whether to back off now.
func (p *pacer) attempt() bool {
	p.tries++
	if p.tries < p.addrs {
		return false
	}
	p.tries = 0
	return true
}

// retry runs call on the believed leader and follows refusals.
func (r *router) retry(ctx context.Context, call func(*grpc.ClientConn) (metadata.MD, error)) error {
	deadline := time.Now().Add(r.budget)
	// Give up a little before the caller's deadline, so that the answer
	// says why (no leader) rather than only that time ran out.
	if dl, ok := ctx.Deadline(); ok && dl.Add(-clientenv.GiveUpMargin).Before(deadline) {
		deadline = dl.Add(-clientenv.GiveUpMargin)
	}
	backoff := 20 * time.Millisecond
	pace := pacer{addrs: len(r.addrs)}
	i := int(r.cur.Load())
	// refused is the last controller's refusal: when the call's time
	// runs out, it says why better than the deadline does.
	var refused error
	gaveUp := func(err error, why string) error {
		if refused == nil {
			return err
		}
		return status.Errorf(codes.Unavailable, "no leader among %s %s: %s", strings.Join(r.addrs, ","), why, status.Convert(refused).Message())
	}
	for {
		trailer, err := call(r.conns[i])
		if err == nil {
			r.cur.Store(int32(i))
			return nil
		}
		if ctx.Err() != nil {
			return gaveUp(err, "before the call's deadline")
		}
		if !redirectable(err) {
			return err
		}
		// A controller's own refusal (a follower, an election) says more
		// than a dead one's connection error: keep the last of those.
		if refused == nil || !transportError(err) {
			refused = err
		}
		if time.Now().After(deadline) {
			return gaveUp(err, "in the time the call had (at most "+r.budget.String()+")")
		}
		n := r.next(i, trailer)
		if pace.attempt() || n == i {
			if clientenv.Sleep(ctx, min(backoff, time.Until(deadline))) != nil {
				return gaveUp(err, "before the call's deadline")
			}
			backoff = min(2*backoff, 250*time.Millisecond)
		}
		i = n
		r.cur.Store(int32(i))
	}
}

func (r *router) unary(ctx context.Context, method string, req, reply any, _ *grpc.ClientConn, _ grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	return r.retry(ctx, func(cc *grpc.ClientConn) (metadata.MD, error) {
		var trailer metadata.MD
		err := cc.Invoke(ctx, method, req, reply, append(opts, grpc.Trailer(&trailer))...)
		return trailer, err
	})
}

func (r *router) stream(ctx context.Context, desc *grpc.StreamDesc, _ *grpc.ClientConn, method string, _ grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	s := &routedStream{r: r, ctx: ctx, desc: desc, method: method, opts: opts}
	if err := s.open(); err != nil {
		return nil, err
	}
	return s, nil
}

// transportError is an Unavailable the client's transport made (nothing
// answered), not a controller's refusal.
func transportError(err error) bool {
	return strings.HasPrefix(status.Convert(err).Message(), "connection error")
}
