package conformance

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	g "github.com/onsi/ginkgo/v2"
	"google.golang.org/protobuf/proto"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/client"
)

// AreaHA holds the specs of a replicated control plane: what a client and
// a running job see when the leading controller dies.
const AreaHA = "high-availability"

// ControllerGroup is implemented by targets that run several controllers
// and can stop one: a lab started with Controllers 3 or 5. A target
// without it (a live cluster), or with one controller, skips the HA specs.
type ControllerGroup interface {
	// Controllers lists the controllers' addresses, running or not.
	Controllers() []string
	// Leader waits until a running controller leads and returns its address.
	Leader(ctx context.Context) (string, error)
	// StopController stops the controller at addr as a crash would: a
	// process lab kills it (SIGKILL), an in-process lab closes it.
	StopController(ctx context.Context, addr string) error
	// RestartController starts it again on its state and returns once it
	// has caught up with the leader.
	RestartController(ctx context.Context, addr string) error
}

var _ ControllerGroup = (*LabTarget)(nil)

// Controllers, Leader, StopController and RestartController are the lab's.
func (t *LabTarget) Controllers() []string { return t.c.Controllers() }
func (t *LabTarget) Leader(ctx context.Context) (string, error) {
	return t.c.Leader(ctx)
}
func (t *LabTarget) StopController(ctx context.Context, addr string) error {
	return t.c.StopController(ctx, addr)
}
func (t *LabTarget) RestartController(ctx context.Context, addr string) error {
	return t.c.RestartController(ctx, addr)
}

// The failover's stream: haClients submitters, haPerClient submissions
// each, the leader stopped once haKillAfter of them were acknowledged.
const (
	haClients   = 8
	haPerClient = 25
	haKillAfter = haClients * haPerClient / 3
	// haFailoverLimit is the longest a client may wait, from the stop of
	// the leader, for the next acknowledgement (the worst case).
	haFailoverLimit = 5 * time.Second
	// haCallLimit bounds one submission, retries through the failover included.
	haCallLimit = 20 * time.Second
)

func haSpecs() []specDef {
	return []specDef{{Area: AreaHA, ID: "ha/leader-failover", Run: specLeaderFailover,
		Name: "the leader stopped amid concurrent submissions: no acknowledged job lost, no id reused, no retry duplicated, running jobs keep their GPUs, a new leader acknowledges within 5 s"}}
}

// haAck is one submission of the stream as its client saw it.
type haAck struct {
	name string
	id   uint64
	at   time.Time
	err  error
}

func specLeaderFailover(e *Env) {
	grp := e.controllerGroup()
	running := e.Submit(JobShape{Name: "ha-running", GPUs: min(e.MultiGPU(), 1), Script: "exec sleep 600"})
	defer e.Cancel(running)
	before := e.WaitRunning(running)
	tag := fmt.Sprintf("conform-ha-%s-%d-", e.Vendor.Name, time.Now().UnixNano())
	acks, killed, stoppedAt := e.haStream(grp, tag)
	defer func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(e.Ctx), 2*time.Minute)
		defer cancel()
		if err := grp.RestartController(ctx, killed); err != nil {
			e.Evidence("log", fmt.Sprintf("restart controller %s: %v", killed, err), nil)
		}
	}()
	defer e.cancelNamed(tag)
	leader, err := grp.Leader(e.Ctx)
	if err != nil {
		e.Errorf("no leader after the failover: %v", err)
	}
	e.Event("fault", "", "", "", fmt.Sprintf("controller %s stopped while leading; %s leads", killed, leader))
	e.haCheckStream(acks, tag, stoppedAt)
	e.haCheckRunning(before)
}

// controllerGroup is the target's controllers, or skips saying why not.
func (e *Env) controllerGroup() ControllerGroup {
	grp, ok := e.Target.(ControllerGroup)
	if !ok {
		g.Skip("the target cannot stop a controller (a lab can: parity conform --controllers 3)")
	}
	if n := len(grp.Controllers()); n < 2 {
		g.Skip(fmt.Sprintf("the target runs %d controller; a leader failover needs 3 or 5 (parity conform --controllers 3)", n))
	}
	return grp
}

// haStream runs the concurrent submissions and stops the leader once a
// third of them were acknowledged; it returns every submission, the
// stopped controller and when it was stopped.
func (e *Env) haStream(grp ControllerGroup, tag string) ([]haAck, string, time.Time) {
	var (
		mu        sync.Mutex
		acks      []haAck
		acked     int
		kill      = make(chan struct{})
		killOnce  sync.Once
		wg        sync.WaitGroup
		dialErr   error
		dialOnce  sync.Once
		spec      = e.Spec(JobShape{Name: "ha"})
		killed    string
		stoppedAt time.Time
		stopErr   error
	)
	spec.Hold = true // queued, never run: the stream measures the control plane
	for c := range haClients {
		cl, err := e.Target.Client(e.Ctx, "")
		if err != nil {
			dialOnce.Do(func() { dialErr = err })
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer cl.Close()
			for i := range haPerClient {
				s := cloneSpec(spec)
				s.Name = fmt.Sprintf("%s%d-%d", tag, c, i)
				ctx, cancel := context.WithTimeout(e.Ctx, haCallLimit)
				id, err := cl.Submit(ctx, s)
				cancel()
				mu.Lock()
				acks = append(acks, haAck{name: s.Name, id: id, at: time.Now(), err: err})
				if err == nil {
					acked++
				}
				if acked >= haKillAfter {
					killOnce.Do(func() { close(kill) })
				}
				mu.Unlock()
				if err != nil {
					return // the next would wait as long; one is enough to fail
				}
			}
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	if dialErr != nil {
		<-done
		e.Errorf("dial the controllers: %s", client.Message(dialErr))
	}
	select {
	case <-done:
		stopErr = fmt.Errorf("the stream ended with fewer than %d acknowledgements", haKillAfter)
	case <-kill:
		killed, stopErr = grp.Leader(e.Ctx)
		if stopErr == nil {
			stoppedAt = time.Now()
			stopErr = grp.StopController(e.Ctx, killed)
		}
	case <-e.Ctx.Done():
		stopErr = e.Ctx.Err()
	}
	<-done
	if stopErr != nil {
		e.Errorf("stop the leader: %v", stopErr)
	}
	return acks, killed, stoppedAt
}

func cloneSpec(s *pb.JobSpec) *pb.JobSpec { return proto.Clone(s).(*pb.JobSpec) }

// haCheckStream checks the promises about the submissions: every
// acknowledged job is there under its name, no id went to two
// submissions, no submission became two jobs, every submission was
// acknowledged, and the first acknowledgement after the stop came within
// haFailoverLimit.
func (e *Env) haCheckStream(acks []haAck, tag string, stoppedAt time.Time) {
	jobs, err := e.Admin.ListJobs(e.Ctx, &pb.ListJobsRequest{})
	if err != nil {
		e.Errorf("list jobs after the failover: %s", client.Message(err))
	}
	byName := map[string][]uint64{}
	byID := map[uint64]string{}
	for _, j := range jobs {
		if n := j.GetSpec().GetName(); strings.HasPrefix(n, tag) {
			byName[n] = append(byName[n], j.GetId())
			byID[j.GetId()] = n
		}
	}
	var lost, reused, dups, failed []string
	idOwner := map[uint64]string{}
	var first time.Time
	for _, a := range acks {
		if a.err != nil {
			failed = append(failed, fmt.Sprintf("%s: %s", a.name, client.Message(a.err)))
			continue
		}
		if owner, ok := idOwner[a.id]; ok {
			reused = append(reused, fmt.Sprintf("job %d acknowledged for %s and %s", a.id, owner, a.name))
		}
		idOwner[a.id] = a.name
		if byID[a.id] != a.name {
			lost = append(lost, fmt.Sprintf("%s (job %d; the controller has %q)", a.name, a.id, byID[a.id]))
		}
		if a.at.After(stoppedAt) && (first.IsZero() || a.at.Before(first)) {
			first = a.at
		}
	}
	for n, ids := range byName {
		if len(ids) > 1 {
			dups = append(dups, fmt.Sprintf("%s became jobs %v", n, ids))
		}
	}
	slices.Sort(dups)
	failover := first.Sub(stoppedAt)
	e.Evidence("log", fmt.Sprintf("%d submissions from %d clients, the leader stopped after %d acknowledgements; first acknowledgement %s after the stop",
		len(acks), haClients, haKillAfter, failover.Round(time.Millisecond)), nil)
	e.Observe("lost", fmt.Sprint(len(lost)))
	e.Observe("reused ids", fmt.Sprint(len(reused)))
	e.Observe("duplicates", fmt.Sprint(len(dups)))
	e.Observe("unacknowledged", fmt.Sprint(len(failed)))
	e.Observe("new leader acknowledges", boolWord(!first.IsZero() && failover <= haFailoverLimit, "within 5s", "late"))
	switch {
	case len(lost) > 0:
		e.Failf("%d acknowledged jobs lost across the failover: %s", len(lost), strings.Join(firstN(lost, 5), "; "))
	case len(reused) > 0:
		e.Failf("%d job ids reused: %s", len(reused), strings.Join(firstN(reused, 5), "; "))
	case len(dups) > 0:
		e.Failf("%d retried submissions became two jobs: %s", len(dups), strings.Join(firstN(dups, 5), "; "))
	case len(failed) > 0:
		e.Failf("%d submissions were never acknowledged (each retried for %s): %s", len(failed), haCallLimit, strings.Join(firstN(failed, 3), "; "))
	case first.IsZero():
		e.Failf("no submission was acknowledged after the leader stopped")
	case failover > haFailoverLimit:
		e.Failf("the first acknowledgement after the leader stopped came %s later, over %s", failover.Round(time.Millisecond), haFailoverLimit)
	}
}

// haCheckRunning checks that the job running through the failover still
// runs, unrestarted, on the same node and devices, and that no other job
// was given its GPUs.
func (e *Env) haCheckRunning(before *pb.Job) {
	after := e.Job(before.GetId())
	was, is := e.SingleAlloc(before), AllocOn(after, before.GetAlloc()[0].GetNode())
	kept := after.GetState() == "RUNNING" && after.GetRestarts() == before.GetRestarts() && is != nil &&
		slices.Equal(was.GetDevices(), is.GetDevices()) && after.GetStartTime().AsTime().Equal(before.GetStartTime().AsTime())
	e.Observe("running job", boolWord(kept, "kept its allocation", "disturbed"))
	if !kept {
		e.Failf("the job running through the failover was disturbed: before %s; after %s", describeJob(before), describeJob(after))
	}
	jobs, err := e.Admin.ListJobs(e.Ctx, &pb.ListJobsRequest{States: []string{"RUNNING"}})
	if err != nil {
		e.Errorf("list running jobs: %s", client.Message(err))
	}
	for _, j := range jobs {
		if j.GetId() == after.GetId() {
			continue
		}
		if a := AllocOn(j, was.GetNode()); a != nil && slices.ContainsFunc(a.GetDevices(), func(d string) bool { return slices.Contains(was.GetDevices(), d) }) {
			e.Failf("job %d was given GPUs %v of job %d, which still runs on them", j.GetId(), a.GetDevices(), after.GetId())
		}
	}
}

// cancelNamed cancels the stream's jobs (admin), ignoring errors.
func (e *Env) cancelNamed(tag string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(e.Ctx), time.Minute)
	defer cancel()
	jobs, err := e.Admin.ListJobs(ctx, &pb.ListJobsRequest{})
	if err != nil {
		return
	}
	for _, j := range jobs {
		if strings.HasPrefix(j.GetSpec().GetName(), tag) {
			_, _ = e.Admin.CancelJob(ctx, j.GetId())
		}
	}
}

func firstN(xs []string, n int) []string { return xs[:min(n, len(xs))] }
