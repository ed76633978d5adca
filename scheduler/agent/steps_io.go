package agent

import (
	"sync/atomic"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
)

// stepSender funnels a step's output and task ends from the reader
// goroutines into its one stream to the controller, in order.
type stepSender struct {
	node   string
	so     *pb.StepOrder
	stream pb.Agent_StepOutputClient
	ch     chan *pb.StepOutputChunk
	failed atomic.Bool
}

// stepQueue bounds the chunks waiting for the stream; a full queue slows
// the tasks' writes down rather than dropping output.
const stepQueue = 256

func newStepSender(node string, so *pb.StepOrder, stream pb.Agent_StepOutputClient) *stepSender {
	return &stepSender{node: node, so: so, stream: stream, ch: make(chan *pb.StepOutputChunk, stepQueue)}
}

func (s *stepSender) chunk() *pb.StepOutputChunk {
	return &pb.StepOutputChunk{Node: s.node, JobId: s.so.GetJobId(), StepId: s.so.GetStepId()}
}

func (s *stepSender) output(task uint32, stream int, data []byte) {
	if s.failed.Load() {
		return
	}
	c := s.chunk()
	c.Task, c.Stream, c.Data = task, int32(stream), data
	s.ch <- c
}

func (s *stepSender) exit(task uint32, code, sig int) {
	c := s.chunk()
	c.Task, c.Exited, c.ExitCode, c.Signal = task, true, int32(code), int32(sig)
	s.ch <- c
}

// finish queues this node's "done" (with why, when the step never ran)
// and closes the queue; nothing may be queued after it.
func (s *stepSender) finish(reason string) {
	c := s.chunk()
	c.Done, c.Reason = true, reason
	s.ch <- c
	close(s.ch)
}

// run sends the queued chunks until finish. A broken stream means no one
// can see the step any more: lost() ends it, and the rest is discarded.
func (s *stepSender) run(lost func()) {
	for c := range s.ch {
		if s.failed.Load() {
			continue
		}
		if err := s.stream.Send(c); err != nil {
			s.failed.Store(true)
			lost()
		}
	}
	if !s.failed.Load() {
		s.stream.CloseAndRecv()
	}
}
