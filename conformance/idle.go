package conformance

import (
	"context"
	"fmt"
	"sync"
	"time"

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
		f, err := st.t.Faults(node)
		if err != nil {
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
			if ij.err == nil {
				for _, gpu := range ij.gpus {
					if err := f.SetUtilization(gpu, 0); err != nil && ij.err == nil {
						ij.err = fmt.Errorf("set %s GPU %d idle: %w", node, gpu, err)
					}
				}
			}
			ij.since = time.Now()
		}()
	}
	wg.Wait()
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
