package agent

import (
	"context"
	"sync"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
)

// jobLanes run orders for different jobs at once and each job's orders in
// the order they came: a launch spends most of its time in fsyncs and
// cgroup writes, and a node given eight jobs at once should not start the
// eighth only after the other seven; a kill must still follow its launch.
type jobLanes struct {
	mu sync.Mutex
	// queued holds the orders waiting behind a job's running one; a job
	// with a lane has an entry (possibly empty).
	queued map[uint64][]*pb.Order
	wg     sync.WaitGroup
}

// dispatch runs o in its job's lane, starting the lane if it is idle.
func (l *jobLanes) dispatch(ctx context.Context, o *pb.Order, handle func(context.Context, *pb.Order)) {
	id := o.GetJobId()
	l.mu.Lock()
	if l.queued == nil {
		l.queued = map[uint64][]*pb.Order{}
	}
	if q, busy := l.queued[id]; busy {
		l.queued[id] = append(q, o)
		l.mu.Unlock()
		return
	}
	l.queued[id] = nil
	l.mu.Unlock()
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		for o != nil {
			handle(ctx, o)
			o = l.next(id)
		}
	}()
}

// next takes the lane's next order, or closes the lane (nil).
func (l *jobLanes) next(id uint64) *pb.Order {
	l.mu.Lock()
	defer l.mu.Unlock()
	q := l.queued[id]
	if len(q) == 0 {
		delete(l.queued, id)
		return nil
	}
	l.queued[id] = q[1:]
	return q[0]
}

// wait returns once every lane has finished.
func (l *jobLanes) wait() { l.wg.Wait() }
