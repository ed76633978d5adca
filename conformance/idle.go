package conformance

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/parityhpc/parity/labs/presets"
	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/client"
)

// idleJobs is one vendor's idle-reclamation scenario: an ordinary job and,
// when an exempt account is known, an exempt one, idling side by side.
type idleJobs struct {
	node        string
	job, exempt uint64
	gpus        []int
	since       time.Time
	err         error
}

// startIdleEverywhere starts the idle jobs of every vendor whose
// idle-reclaim spec is planned, at once, so their idle clocks run while
// the other vendors' specs do; reclamation takes tens of seconds per job.
// Vendors it cannot prepare are left to their own spec, which then skips
// or fails saying why.
func (st *runState) startIdleEverywhere(ctx context.Context) {
	st.mu.Lock()
	if st.idle != nil {
		st.mu.Unlock()
		return
	}
	st.idle = map[string]*idleJobs{}
	st.mu.Unlock()
	var wg sync.WaitGroup
	for _, v := range st.t.Vendors() {
		if !st.planned[specKey{"health/idle-reclaim", v.Name}] || !v.HasGPUs() {
			continue
		}
		node := disturbable(st.t, v)
		if ok, _ := st.t.MayDisturb(node); !ok {
			continue
		}
		f, why := st.idleHooks(ctx, node)
		if why != "" {
			continue
		}
		ij := &idleJobs{node: node}
		st.mu.Lock()
		st.idle[v.Name] = ij
		st.mu.Unlock()
		wg.Add(1)
		go func() {
			defer wg.Done()
			ij.err = st.idleOn(ctx, v, ij)
			if ij.err == nil && f != nil {
				for _, gpu := range ij.gpus {
					if err := f.SetUtilization(gpu, 0); err != nil && ij.err == nil {
						ij.err = fmt.Errorf("set %s GPU %d idle: %w", node, gpu, err)
					}
				}
			}
			ij.since = st.targetNow()
		}()
	}
	wg.Wait()
}

// idleHooks says how an idle job's GPU goes idle on node. A lab sets its
// utilisation to zero through f. Where faults cannot be injected (real
// hardware) a GPU under "sleep" is idle by itself, and f is nil, if the
// cluster reclaims soon enough to be seen within the health wait; why
// says why not.
func (st *runState) idleHooks(ctx context.Context, node string) (f presets.Faults, why string) {
	f, err := st.t.Faults(node)
	if err == nil {
		return f, ""
	}
	if !errors.Is(err, ErrNotSupported) {
		return nil, err.Error()
	}
	info, ierr := st.admin.Info(ctx)
	if ierr != nil {
		return nil, "read the cluster's reclamation policy: " + client.Message(ierr)
	}
	return nil, reclaimTooSlow(info.GetReclamation(), st.opts.HealthWait)
}

// reclaimTooSlow says why a cluster's reclamation policy cannot be watched
// within wait ("" when it can): the warning must come within wait of the
// job going idle and the reclamation within twice that after.
func reclaimTooSlow(p *pb.ReclamationPolicy, wait time.Duration) string {
	switch {
	case p == nil || !p.GetEnabled():
		return "the cluster's idle-GPU reclamation is off"
	case p.GetDryRun():
		return "the cluster's idle-GPU reclamation is in dry-run: it logs and does not act"
	}
	warn := max(p.GetIdleFor().AsDuration(), p.GetMinRuntime().AsDuration())
	if warn >= wait || p.GetGrace().AsDuration() >= 2*wait {
		return fmt.Sprintf("the cluster warns an idle job after %s and reclaims it %s later, beyond what --health-wait %s watches (shorten reclamation.idleFor and grace on a test cluster, or raise --health-wait)",
			warn, p.GetGrace().AsDuration(), wait)
	}
	return ""
}

// idleOn submits one vendor's idle jobs and waits for them to run.
func (st *runState) idleOn(ctx context.Context, v VendorTarget, ij *idleJobs) error {
	shape := JobShape{Name: "idle", GPUs: 1, CPUs: 1, Nodelist: []string{ij.node}, Script: "sleep 300"}
	e := &Env{Target: st.t, Vendor: v, run: st}
	var err error
	if ij.job, err = st.user.Submit(ctx, e.Spec(shape)); err != nil {
		return fmt.Errorf("submit the idle job: %s", client.Message(err))
	}
	jobs := []uint64{ij.job}
	if acct := st.opts.ExemptAccount; acct != "" {
		spec := e.Spec(JobShape{Name: "idle-exempt", GPUs: 1, CPUs: 1, Nodelist: []string{ij.node}, Script: "sleep 300"})
		spec.Account = acct
		if ij.exempt, err = st.user.Submit(ctx, spec); err != nil {
			return fmt.Errorf("submit the exempt idle job (account %s): %s", acct, client.Message(err))
		}
		jobs = append(jobs, ij.exempt)
	}
	for _, id := range jobs {
		st.atEnd(func() { st.admin.CancelJob(context.WithoutCancel(ctx), id) })
		gpu, err := st.runningGPU(ctx, id, ij.node)
		if err != nil {
			return err
		}
		ij.gpus = append(ij.gpus, gpu)
	}
	return nil
}

// runningGPU waits for a one-GPU job to run and returns its GPU's index.
func (st *runState) runningGPU(ctx context.Context, id uint64, node string) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, st.opts.JobTimeout)
	defer cancel()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	var last *pb.Job
	for {
		j, err := st.admin.GetJob(ctx, id, false)
		if err == nil {
			last = j
			if a := AllocOn(j, node); j.GetState() == "RUNNING" && a != nil && len(a.GetDevices()) == 1 {
				n, err := st.admin.GetNode(ctx, node)
				if err != nil {
					return 0, fmt.Errorf("read node %s: %s", node, client.Message(err))
				}
				for _, g := range n.GetGpus() {
					if g.GetUuid() == a.GetDevices()[0] {
						return int(g.GetIndex()), nil
					}
				}
				return 0, fmt.Errorf("node %s has no GPU %s", node, a.GetDevices()[0])
			}
		}
		select {
		case <-ctx.Done():
			return 0, fmt.Errorf("idle job %d did not start running: %s", id, describeJob(last))
		case <-tick.C:
		}
	}
}

// disturbable is the vendor node specs may drain and fault (the last one,
// or the last one the target allows).
func disturbable(t Target, v VendorTarget) string {
	node := v.Nodes[len(v.Nodes)-1]
	for _, n := range v.Nodes {
		if ok, _ := t.MayDisturb(n); ok {
			node = n
		}
	}
	return node
}
