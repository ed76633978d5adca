package controller

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/auth"
	"github.com/parityhpc/parity/scheduler/client"
	"github.com/parityhpc/parity/scheduler/internal/jobhistory"
)

// The fault runs' histories: every attempt a client makes on one
// controller (the client's own retries on another included) is one
// operation of the history, recorded by an interceptor on the connection
// to that controller, and the whole is checked for linearizability.

// recordCalls records the job calls made over a connection as client
// number id's operations.
func recordCalls(rec *jobhistory.Recorder, id int) grpc.DialOption {
	return grpc.WithChainUnaryInterceptor(func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoke grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		in, ok := historyInput(method, req)
		if !ok {
			return invoke(ctx, method, req, reply, cc, opts...)
		}
		call := rec.Begin(id, in)
		err := invoke(ctx, method, req, reply, cc, opts...)
		if refusedUnexecuted(err) {
			return err // a follower's or a deposed leader's refusal: nothing happened
		}
		call.End(historyOutput(reply, err))
		return err
	})
}

func historyInput(method string, req any) (jobhistory.Input, bool) {
	switch method {
	case pb.Jobs_Submit_FullMethodName:
		return jobhistory.Input{Kind: jobhistory.Submit, Name: req.(*pb.SubmitRequest).GetSpec().GetName()}, true
	case pb.Jobs_Cancel_FullMethodName:
		return jobhistory.Input{Kind: jobhistory.Cancel, Job: req.(*pb.CancelRequest).GetJobId()}, true
	case pb.Jobs_Update_FullMethodName:
		r := req.(*pb.UpdateJobRequest)
		return jobhistory.Input{Kind: jobhistory.Update, Job: r.GetJobId(), Name: r.GetName()}, true
	case pb.Jobs_Get_FullMethodName:
		return jobhistory.Input{Kind: jobhistory.Read, Job: req.(*pb.GetJobRequest).GetJobId()}, true
	}
	return jobhistory.Input{}, false
}

func historyOutput(reply any, err error) jobhistory.Output {
	switch status.Code(err) {
	case codes.OK:
	case codes.NotFound:
		return jobhistory.Output{Outcome: jobhistory.NotFound}
	case codes.FailedPrecondition:
		return jobhistory.Output{Outcome: jobhistory.Finished}
	default:
		return jobhistory.Output{Outcome: jobhistory.Unknown}
	}
	out := jobhistory.Output{Outcome: jobhistory.OK}
	switch r := reply.(type) {
	case *pb.SubmitResponse:
		out.Job = r.GetJobId()
	case *pb.Job:
		out.State, out.Name = r.GetState(), r.GetSpec().GetName()
	}
	return out
}

// refusedUnexecuted is a call that was not run: the leader gate's
// refusal, or a connection that never came up (gRPC sends a call only on
// a ready connection). Leaving one out that did run could only make the
// check fail, never pass.
func refusedUnexecuted(err error) bool {
	msg := status.Convert(err).Message()
	return status.Code(err) == codes.Unavailable &&
		(strings.HasPrefix(msg, "connection error:") || strings.Contains(msg, "is not the leader") ||
			strings.Contains(msg, "was just elected") || strings.Contains(msg, "could not confirm"))
}

// workload is concurrent clients submitting, cancelling, renaming and
// reading jobs, each operation recorded.
type workload struct {
	t    *testing.T
	rec  *jobhistory.Recorder
	key  auth.Key
	mu   sync.Mutex
	jobs []uint64 // acknowledged submissions
	ids  int      // client numbers given
}

func newWorkload(t *testing.T, key auth.Key) *workload {
	return &workload{t: t, rec: jobhistory.NewRecorder(), key: key}
}

// dial is a recorded client of addrs (one address or a list).
func (w *workload) dial(addrs string) *client.Client {
	w.t.Helper()
	return w.dialWith(addrs)
}

// dialWith is dial with more options.
func (w *workload) dialWith(addrs string, opts ...grpc.DialOption) *client.Client {
	w.t.Helper()
	tok, err := auth.Sign(w.key, auth.Claims{User: "alice", Role: auth.RoleUser, IssuedAt: time.Now()})
	if err != nil {
		w.t.Fatal(err)
	}
	w.mu.Lock()
	id := w.ids
	w.ids++
	w.mu.Unlock()
	cl, err := client.Dial(context.Background(), addrs, tok, append(opts, recordCalls(w.rec, id))...)
	if err != nil {
		w.t.Fatal(err)
	}
	w.t.Cleanup(func() { cl.Close() })
	return cl
}

func (w *workload) known(r *rand.Rand) (uint64, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.jobs) == 0 {
		return 0, false
	}
	return w.jobs[r.IntN(len(w.jobs))], true
}

// run is n operations of one client; fault, when set, runs before
// operation at.
func (w *workload) run(ctx context.Context, cl *client.Client, seed uint64, n, at int, fault func()) {
	r := rand.New(rand.NewPCG(seed, 26))
	for i := range n {
		if i == at && fault != nil {
			fault()
		}
		w.step(ctx, cl, r, seed, i, 10*time.Second)
	}
}

// runUntil is operations of one client, each given timeout, until stop
// is closed.
func (w *workload) runUntil(ctx context.Context, cl *client.Client, seed uint64, timeout time.Duration, stop <-chan struct{}) {
	r := rand.New(rand.NewPCG(seed, 26))
	for i := 0; ; i++ {
		select {
		case <-stop:
			return
		default:
		}
		w.step(ctx, cl, r, seed, i, timeout)
	}
}

// readRecent reads, until stop is closed, one of the last jobs
// acknowledged (those a stale controller is likeliest not to know, or
// to know in an older state), each read given timeout.
func (w *workload) readRecent(ctx context.Context, cl *client.Client, seed uint64, timeout time.Duration, stop <-chan struct{}) {
	r := rand.New(rand.NewPCG(seed, 26))
	for {
		select {
		case <-stop:
			return
		default:
		}
		w.mu.Lock()
		var id uint64
		if n := len(w.jobs); n > 0 {
			id = w.jobs[n-1-r.IntN(min(n, 4))]
		}
		w.mu.Unlock()
		opCtx, cancel := context.WithTimeout(ctx, timeout)
		cl.GetJob(opCtx, id, false)
		cancel()
	}
}

// step is one operation: a submission one time in three, else a cancel,
// a rename or (mostly) a read of a job some client submitted.
func (w *workload) step(ctx context.Context, cl *client.Client, r *rand.Rand, seed uint64, i int, timeout time.Duration) {
	id, ok := w.known(r)
	opCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	switch p := r.IntN(6); {
	case !ok || p < 2:
		name := fmt.Sprintf("s%d-%d", seed, i)
		if jid, err := cl.Submit(opCtx, gpuJob(name, 1)); err == nil {
			w.mu.Lock()
			w.jobs = append(w.jobs, jid)
			w.mu.Unlock()
		}
	case p == 2:
		cl.CancelJob(opCtx, id)
	case p == 3:
		name := fmt.Sprintf("r%d-%d", seed, i)
		cl.UpdateJob(opCtx, &pb.UpdateJobRequest{JobId: id, Name: &name})
	default:
		cl.GetJob(opCtx, id, false)
	}
}

// readAll reads every acknowledged job once more through cl: a job lost,
// or a change undone, shows there.
func (w *workload) readAll(ctx context.Context, cl *client.Client) {
	w.mu.Lock()
	jobs := append([]uint64(nil), w.jobs...)
	w.mu.Unlock()
	for _, id := range jobs {
		if _, err := cl.GetJob(ctx, id, false); err != nil {
			w.t.Errorf("job %d, acknowledged, after the fault: %v", id, err)
		}
	}
}

// TestTheHistoryOfALeaderCrashIsLinearizable: concurrent clients submit,
// cancel, rename and read jobs through the controllers' list while the
// leader's raft is killed mid-stream; every attempt on every controller
// is recorded, and the history, with a read of every acknowledged job
// after, is linearizable against the job table: no acknowledged job or
// change lost, no id given twice, no read that goes back in time.
func TestTheHistoryOfALeaderCrashIsLinearizable(t *testing.T) {
	tr := startTrio(t)
	first := tr.leader()
	list := strings.Join(tr.addrs, ",")
	w := newWorkload(t, tr.key)
	const clients, each = 6, 30
	var wg sync.WaitGroup
	for c := range clients {
		cl := w.dial(list)
		wg.Add(1)
		go func() {
			defer wg.Done()
			var fault func()
			if c == 0 {
				fault = func() { tr.crash(first) }
			}
			w.run(context.Background(), cl, uint64(c+1), each, each/3, fault)
		}()
	}
	wg.Wait()
	if next := tr.leader(); next == first {
		t.Fatal("the crashed controller still leads")
	}
	w.readAll(context.Background(), w.dial(list))
	if len(w.jobs) < clients*each/4 {
		t.Fatalf("only %d submissions acknowledged of about %d", len(w.jobs), clients*each/3)
	}
	w.rec.CheckT(t)
	t.Logf("%d operations (%s), %d jobs acknowledged, linearizable", w.rec.Len(), w.rec.Summary(), len(w.jobs))
}
