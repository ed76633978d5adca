package agent

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os/user"
	"slices"
	"strconv"
	"syscall"
	"time"

	"github.com/parityhpc/parity/scheduler/accounting"
	"github.com/parityhpc/parity/scheduler/agent/launch"
	"github.com/parityhpc/parity/scheduler/api"
	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/jobspec"
	"github.com/parityhpc/parity/topology"
	"github.com/parityhpc/parity/vendors"
)

// Order kinds on the wire.
const (
	orderLaunch   = "launch"
	orderKill     = "kill"
	orderSignal   = "signal"
	orderDiagnose = "diagnose"
	orderSuspend  = "suspend"
	orderResume   = "resume"
	// orderPartition re-partitions one GPU (repartition.go).
	orderPartition = "partition"
)

// stateLaunchFailed tells the controller a job's batch step never started;
// stateLaunchFailedDevices that it never started because its devices'
// driver adapter was down, a fault of the node and not of the job.
const (
	stateLaunchFailed        = "LAUNCH_FAILED"
	stateLaunchFailedDevices = "LAUNCH_FAILED_DEVICES"
)

// launchFailure is how a failed launch is reported: the job's own
// problem (an unknown user, an unwritable output path: it would fail
// again), or its devices' adapter being down (it runs once they return).
func launchFailure(err error) string {
	if errors.Is(err, ErrAdapterDown) {
		return stateLaunchFailedDevices
	}
	return stateLaunchFailed
}

// Identity is a user as this node knows them.
type Identity struct {
	UID, GID uint32
	Groups   []uint32
}

// lookupUser resolves a user name in the node's user database.
func lookupUser(name string) (Identity, error) {
	u, err := user.Lookup(name)
	if err != nil {
		return Identity{}, fmt.Errorf("agent: user %q: %w", name, err)
	}
	uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
	gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
	if err := errors.Join(err1, err2); err != nil {
		return Identity{}, fmt.Errorf("agent: user %q has a non-numeric id: %w", name, err)
	}
	id := Identity{UID: uint32(uid), GID: uint32(gid)}
	gids, err := u.GroupIds()
	if err != nil {
		return Identity{}, fmt.Errorf("agent: groups of user %q: %w", name, err)
	}
	for _, g := range gids {
		if n, err := strconv.ParseUint(g, 10, 32); err == nil {
			id.Groups = append(id.Groups, uint32(n))
		}
	}
	return id, nil
}

// handle carries out one order. Orders are idempotent by job and kind:
// the controller may send one again until it sees the result.
func (a *Agent) handle(ctx context.Context, o *pb.Order) {
	id := o.GetJobId()
	switch o.GetKind() {
	case orderLaunch:
		a.awaitSettled(ctx, id)
		if !a.retireEarlierRun(ctx, id, o.GetRun()) {
			return
		}
		if err := a.launch(ctx, o.GetRun(), o.GetLaunch()); err != nil {
			a.log.Error("launch failed", "job", id, "run", o.GetRun(), "err", err)
			a.reportEnd(ctx, &pb.JobEndedRequest{Node: a.cfg.Node, JobId: id, Run: o.GetRun(), State: launchFailure(err), ExitCode: 1,
				EndTime: api.Timestamp(time.Now()), Reason: err.Error()})
			a.release(ctx, id)
		}
	case orderKill:
		// The controller knows why (cancel, requeue, preemption, limit)
		// and settles the job itself; to the runtime it is a cancel. A
		// kill of an earlier run leaves the job's later run alone.
		if !a.isRunAtMost(id, o.GetRun()) {
			a.log.Info("kill order for an earlier run; the job runs a later one here", "job", id, "run", o.GetRun(), "reason", o.GetReason())
			return
		}
		a.steps.hold(id, o.GetRun(), false)
		if _, still := a.steps.heldRun(id); !still {
			a.cfg.Runtime.Unhold(id)
		}
		a.steps.runner.KillJob(id)
		err := a.cfg.Runtime.Terminate(ctx, id, accounting.StateCancelled)
		if err != nil && !errors.Is(err, launch.ErrUnknownJob) {
			a.log.Error("kill failed", "job", id, "err", err)
		}
		a.log.Info("kill order", "job", id, "reason", o.GetReason(), "running", err == nil)
	case orderSignal, orderSuspend, orderResume:
		if run, ok := a.cfg.Runtime.RunOf(id); ok && run != o.GetRun() {
			a.log.Info("order for another run of the job; ignored", "job", id, "kind", o.GetKind(), "run", o.GetRun(), "here", run)
			return
		}
		a.jobOrder(ctx, o)
	case orderDiagnose:
		a.diagnose(ctx, o.GetDevice(), int(o.GetLevel()))
	case orderPartition:
		a.repartition(ctx, o.GetDevice(), o.GetPartitions())
	case orderStep, orderStepKill:
		a.handleStep(ctx, o)
	default:
		a.log.Warn("unknown order kind; ignored", "kind", o.GetKind(), "job", id)
	}
}

// jobOrder signals, suspends or resumes a job's run on this node.
func (a *Agent) jobOrder(ctx context.Context, o *pb.Order) {
	id := o.GetJobId()
	switch o.GetKind() {
	case orderSignal:
		sig := syscall.Signal(o.GetSignal())
		if sig < 1 || sig > 64 {
			a.log.Warn("signal order with an invalid signal; ignored", "job", id, "signal", o.GetSignal())
			return
		}
		if err := a.cfg.Runtime.Signal(ctx, id, sig); err != nil && !errors.Is(err, launch.ErrUnknownJob) {
			a.log.Error("signal failed", "job", id, "signal", sig, "err", err)
		}
	case orderSuspend, orderResume:
		// scontrol suspend/resume: stop or continue the job's processes
		// and its time limit clock (idempotent in the runtime).
		pause := a.cfg.Runtime.Suspend
		if o.GetKind() == orderResume {
			pause = a.cfg.Runtime.Resume
		}
		err := pause(ctx, id)
		if err != nil && !errors.Is(err, launch.ErrUnknownJob) {
			a.log.Error("suspend/resume failed", "job", id, "kind", o.GetKind(), "err", err)
		}
		a.log.Info("job order", "job", id, "kind", o.GetKind(), "reason", o.GetReason(), "running", err == nil)
	}
}

// launch starts the batch step when this node is the batch host; the other
// nodes of a job hold their share for steps and run nothing yet.
func (a *Agent) launch(ctx context.Context, run int32, o *pb.LaunchOrder) error {
	j := o.GetJob()
	if j == nil || o.GetAlloc() == nil {
		return fmt.Errorf("agent: launch order without job or allocation")
	}
	if batch := batchHost(o); batch != a.cfg.Node || j.GetSpec().GetInteractive() {
		// Held for steps (srun); an interactive job (salloc) has no batch step.
		a.steps.hold(j.GetId(), run, true)
		a.cfg.Runtime.Hold(j.GetId(), o.GetAlloc().GetDevices())
		a.log.Info("allocation held for steps", "job", j.GetId(), "batchHost", batch, "interactive", j.GetSpec().GetInteractive())
		return nil
	}
	spec, err := a.spec(ctx, o)
	if err != nil {
		return err
	}
	spec.Run = run
	return a.cfg.Runtime.Launch(ctx, spec)
}

func batchHost(o *pb.LaunchOrder) string {
	if h := o.GetJob().GetBatchHost(); h != "" {
		return h
	}
	if all := o.GetAll(); len(all) > 0 {
		return all[0].GetNode()
	}
	return o.GetAlloc().GetNode()
}

// spec turns a launch order into the runtime's Spec: the user's identity
// on this node, the CPUs, memory and devices of this node's share (each
// vendor driver preparing its own devices), the environment and the limits.
func (a *Agent) spec(ctx context.Context, o *pb.LaunchOrder) (launch.Spec, error) {
	j, s, alloc := o.GetJob(), o.GetJob().GetSpec(), o.GetAlloc()
	who, err := a.cfg.LookupUser(j.GetUser())
	if err != nil {
		return launch.Spec{}, err
	}
	cpus, err := topology.ParseCPUList(alloc.GetCpus())
	if err != nil {
		return launch.Spec{}, fmt.Errorf("agent: job %d: allocation cpus %q: %w", j.GetId(), alloc.GetCpus(), err)
	}
	spec := launch.Spec{JobID: j.GetId(), Name: s.GetName(), User: j.GetUser(), UID: who.UID, GID: who.GID, Groups: who.Groups,
		Script: s.GetScript(), Args: s.GetArgv(), WorkDir: s.GetWorkdir(), Output: s.GetOutput(), Error: s.GetError(), Input: s.GetInput(),
		Append: s.GetOpenMode() == "append", CPUs: cpus, MemoryBytes: alloc.GetMemoryMb() << 20, GPUs: slices.Clone(alloc.GetDevices()),
		InArray: j.GetArrayTask(), ArrayJobID: j.GetArrayJobId(), ArrayTaskID: uint32(j.GetArrayTaskId())}
	for _, a := range o.GetAll() {
		spec.Nodes = append(spec.Nodes, a.GetNode())
	}
	if lim := o.GetTimeLimitSeconds(); lim > 0 {
		spec.TimeLimit = time.Duration(lim) * time.Second
	}
	if sig := s.GetSignal(); sig != "" {
		p, err := jobspec.ParseSignal(sig)
		if err != nil {
			return launch.Spec{}, fmt.Errorf("agent: job %d: %w", j.GetId(), err)
		}
		spec.Signal = &p
	}
	spec.Env = maps.Clone(s.GetEnv())
	if spec.Env == nil {
		spec.Env = map[string]string{}
	}
	maps.Copy(spec.Env, slurmEnv(o, cpus, a.inventory(), a.site()))
	if err := a.prepare(ctx, &spec); err != nil {
		return launch.Spec{}, err
	}
	return spec, nil
}

// prepare asks each driver for access to the allocated devices it owns.
func (a *Agent) prepare(ctx context.Context, spec *launch.Spec) error {
	byVendor := map[string][]string{}
	for _, u := range spec.GPUs {
		d, ok := a.inventory().Device(u)
		if !ok {
			return fmt.Errorf("agent: job %d: device %s is not in this node's inventory", spec.JobID, u)
		}
		byVendor[d.Vendor] = append(byVendor[d.Vendor], u)
	}
	for _, drv := range a.cfg.Drivers {
		uuids := byVendor[drv.Info().Vendor]
		if len(uuids) == 0 {
			continue
		}
		p, err := drv.Prepare(ctx, vendors.Allocation{ID: strconv.FormatUint(spec.JobID, 10), Devices: uuids})
		if err != nil {
			return fmt.Errorf("agent: job %d: prepare %s devices: %w", spec.JobID, drv.Info().Name, err)
		}
		spec.AddPrepared(p)
		delete(byVendor, drv.Info().Vendor)
	}
	for v, uuids := range byVendor {
		return fmt.Errorf("agent: job %d: no driver for vendor %q prepares devices %v", spec.JobID, v, uuids)
	}
	return nil
}

// release undoes every driver's Prepare for a job (idempotent).
func (a *Agent) release(ctx context.Context, id uint64) {
	for _, drv := range a.cfg.Drivers {
		if err := drv.Release(ctx, strconv.FormatUint(id, 10)); err != nil {
			a.log.Warn("device release failed", "job", id, "driver", drv.Info().Name, "err", err)
		}
	}
}
