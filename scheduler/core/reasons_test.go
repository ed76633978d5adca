package core

import (
	"testing"
	"time"

	"github.com/parityhpc/parity/gres"
	"github.com/parityhpc/parity/topology"
)

// TestPendingReasons: every way a job can wait gets Slurm's reason.
func TestPendingReasons(t *testing.T) {
	later := t0.Add(2 * time.Hour)
	tests := []struct {
		name   string
		mod    func(s *Snapshot, j *Job)
		want   Reason
		known  bool // expected start known
		action Action
	}{
		{name: "held by user", mod: func(_ *Snapshot, j *Job) { j.Hold = HoldUser }, want: ReasonJobHeldUser},
		{name: "held by admin", mod: func(_ *Snapshot, j *Job) { j.Hold = HoldAdmin }, want: ReasonJobHeldAdmin},
		{name: "dependency", mod: func(_ *Snapshot, j *Job) { j.Dependency = DependencyWaiting }, want: ReasonDependency},
		{name: "dependency never", mod: func(_ *Snapshot, j *Job) { j.Dependency = DependencyNever }, want: ReasonDependencyNeverSatisfied},
		{name: "begin time", mod: func(_ *Snapshot, j *Job) { j.Begin = t0.Add(time.Hour) }, want: ReasonBeginTime, known: true},
		{name: "partition time limit", mod: func(s *Snapshot, j *Job) { s.Partitions[0].MaxTime = 30 * time.Minute }, want: ReasonPartitionTimeLimit},
		{name: "partition node limit", mod: func(s *Snapshot, j *Job) { s.Partitions[0].MaxNodes = 1; j.Nodes = 2 }, want: ReasonPartitionNodeLimit},
		{name: "partition down", mod: func(s *Snapshot, j *Job) { s.Partitions[0].Down = true }, want: ReasonPartitionDown},
		{name: "unknown partition", mod: func(_ *Snapshot, j *Job) { j.Partition = "nope" }, want: ReasonPartitionConfig},
		{name: "unknown feature", mod: func(_ *Snapshot, j *Job) { j.Constraint = "quantum" }, want: ReasonBadConstraints},
		{name: "non-gpu gres", mod: func(_ *Snapshot, j *Job) { j.GRES.PerNode = gres.Requests{{Name: "nic", Count: 1}} }, want: ReasonBadConstraints},
		{name: "two GPU types", mod: func(_ *Snapshot, j *Job) {
			j.GRES.PerNode = gres.Requests{{Name: "gpu", Type: "h100", Count: 1}, {Name: "gpu", Type: "a100", Count: 1}}
		}, want: ReasonBadConstraints},
		{name: "more GPUs than a node has", mod: func(_ *Snapshot, j *Job) { j.GRES.PerNode[0].Count = 9 }, want: ReasonBadConstraints},
		{name: "required node drained", mod: func(s *Snapshot, j *Job) { s.Nodes[0].State = NodeDrain; j.NodeList = []string{"n1"} }, want: ReasonReqNodeNotAvail},
		{name: "excluded everywhere", mod: func(_ *Snapshot, j *Job) { j.Exclude = []string{"n1", "n2"} }, want: ReasonBadConstraints},
		{name: "undefined QOS", mod: func(_ *Snapshot, j *Job) { j.QOS = "gold" }, want: ReasonInvalidQOS},
		{name: "QOS GPUs per user", mod: func(s *Snapshot, j *Job) {
			s.QOS = []QOS{{Name: "normal", MaxGPUsPerUser: 8}}
			j.QOS = "normal"
			r := busy(90, "n2", []int{0, 1, 2, 3, 4, 5, 6}, topology.CPURange(0, 3), 0, later)
			r.User, r.QOS = j.User, "normal"
			s.Jobs = append(s.Jobs, r)
		}, want: ReasonQOSMaxGRESPerUser},
		{name: "limiter", mod: func(_ *Snapshot, j *Job) {}, want: ReasonAccountingPolicy},
		{name: "reservation not started", mod: func(s *Snapshot, j *Job) {
			s.Reservations = []Reservation{{Name: "maint", Start: t0.Add(time.Hour), End: t0.Add(3 * time.Hour), Nodes: []string{"n1"}}}
			j.Reservation = "maint"
		}, want: ReasonReservation, known: true},
		{name: "reservation unknown", mod: func(_ *Snapshot, j *Job) { j.Reservation = "ghost" }, want: ReasonReservation},
		{name: "resources", mod: func(s *Snapshot, j *Job) {
			s.Jobs = append(s.Jobs, busy(90, "n1", []int{0}, topology.NewCPUSet(0), 0, later), busy(91, "n2", []int{0}, topology.NewCPUSet(0), 0, later))
			j.GRES.PerNode[0].Count = 8
		}, want: ReasonResources, known: true, action: ActionReserve},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			snap := snapshot(gpuNode(t, "n1", "h100"), gpuNode(t, "n2", "h100"))
			j := job(1, 1, 2, "h100", time.Hour)
			tc.mod(&snap, &j)
			snap.Jobs = append(snap.Jobs, j)
			cfg := DefaultConfig()
			if tc.want == ReasonAccountingPolicy {
				cfg.Limits = []Limiter{func(job *Job, want Tally, held *Usage) (Reason, string, bool) {
					return ReasonAccountingPolicy, "at most one GPU per job", held.Account(job.Account).Jobs == 0 && want.GPUs <= 1
				}}
			}
			d := decision(t, Schedule(snap, cfg, t0), 1)
			if d.Reason != tc.want || d.StartKnown != tc.known || d.Action != tc.action {
				t.Fatalf("got %s/%s known=%v (%s), want %s/%s known=%v", d.Action, d.Reason, d.StartKnown, d.Detail, tc.action, tc.want, tc.known)
			}
		})
	}
}

// TestAdminReservation: members run inside it; others may use its nodes
// only if they finish before it starts.
func TestAdminReservation(t *testing.T) {
	resv := Reservation{Name: "train", Start: t0.Add(-time.Hour), End: t0.Add(5 * time.Hour), Nodes: []string{"n1"}, Accounts: []string{"physics"}}
	future := Reservation{Name: "maint", Start: t0.Add(2 * time.Hour), End: t0.Add(5 * time.Hour), Nodes: []string{"n1"}}
	tests := []struct {
		name   string
		resv   Reservation
		mod    func(j *Job)
		wantOn string
	}{
		{name: "member runs in it", resv: resv, mod: func(j *Job) { j.Reservation = "train" }, wantOn: "n1"},
		{name: "non-member avoids an active one", resv: resv, mod: func(j *Job) { j.Account = "bio" }, wantOn: "n2"},
		{name: "short job uses nodes before it starts", resv: future, mod: func(j *Job) { j.TimeLimit = time.Hour }, wantOn: "n1"},
		{name: "long job avoids nodes of a future one", resv: future, mod: func(j *Job) { j.TimeLimit = 3 * time.Hour }, wantOn: "n2"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			snap := snapshot(gpuNode(t, "n1", "h100"), gpuNode(t, "n2", "h100"))
			snap.Reservations = []Reservation{tc.resv}
			j := job(1, 1, 8, "h100", time.Hour)
			tc.mod(&j)
			snap.Jobs = []Job{j}
			if s := mustStart(t, Schedule(snap, DefaultConfig(), t0), 1); s.Nodes[0].Node != tc.wantOn {
				t.Fatalf("on %s, want %s", s.Nodes[0].Node, tc.wantOn)
			}
		})
	}
}

// TestJobsBehindTooFewUpNodesWaitOnPriority: a job that needs more nodes
// than are up waits on Resources and blocks its partition as Slurm's
// does: a later job of that shape waits on Priority; a later job that fits
// starts only where backfill is on.
func TestJobsBehindTooFewUpNodesWaitOnPriority(t *testing.T) {
	for _, tc := range []struct {
		mode       BackfillMode
		smallStart bool
	}{{BackfillEASY, true}, {BackfillConservative, true}, {BackfillNone, false}} {
		t.Run(string(tc.mode), func(t *testing.T) {
			snap := snapshot(gpuNode(t, "n1", "h100"), gpuNode(t, "n2", "h100"))
			snap.Nodes[1].State = NodeDrain
			// Older jobs rank first: 3, then 2, then the small 1.
			snap.Jobs = []Job{job(3, 2, 8, "h100", time.Hour), job(2, 2, 8, "h100", time.Hour), job(1, 1, 1, "h100", time.Hour)}
			cfg := DefaultConfig()
			cfg.Backfill = tc.mode
			plan := Schedule(snap, cfg, t0)
			if d := decision(t, plan, 3); d.Reason != ReasonResources || d.Action != ActionPending || d.Detail != DescNodesDown {
				t.Errorf("first job too big for the nodes up: %s/%s (%s), want pending/Resources (%s), as Slurm words it", d.Action, d.Reason, d.Detail, DescNodesDown)
			}
			if d := decision(t, plan, 2); d.Reason != ReasonPriority {
				t.Errorf("second job of that shape: %s/%s (%s), want Priority", d.Action, d.Reason, d.Detail)
			}
			small := decision(t, plan, 1)
			if started := small.Action == ActionStart; started != tc.smallStart {
				t.Errorf("small job behind them: %s/%s, want started=%v", small.Action, small.Reason, tc.smallStart)
			}
			if !tc.smallStart && small.Reason != ReasonPriority {
				t.Errorf("small job without backfill waits on %s, want Priority", small.Reason)
			}
		})
	}
}

// TestReservationBlockedJobsSayWhy: a job kept out only by admin
// reservations waits on ReqNodeNotAvail with Slurm's words (checked
// against Slurm 22.05), and still gets an expected start.
func TestReservationBlockedJobsSayWhy(t *testing.T) {
	both := []string{"n1", "n2"}
	for _, tc := range []struct {
		name   string
		resv   Reservation
		reason Reason
		detail string
	}{
		{"a maintenance window now", Reservation{Name: "maint", Start: t0.Add(-time.Minute), End: t0.Add(time.Hour), Nodes: both, Flags: ResvMaint},
			ReasonReqNodeNotAvail, "Reserved for maintenance"},
		{"a reservation before the job would end", Reservation{Name: "future", Start: t0.Add(10 * time.Minute), End: t0.Add(2 * time.Hour), Nodes: both, Users: []string{"bob"}},
			ReasonReqNodeNotAvail, "May be reserved for other job"},
		{"one node reserved, the other free", Reservation{Name: "half", Start: t0.Add(-time.Minute), End: t0.Add(time.Hour), Nodes: []string{"n1"}, Flags: ResvMaint},
			"", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			snap := snapshot(gpuNode(t, "n1", "h100"), gpuNode(t, "n2", "h100"))
			snap.Reservations = []Reservation{tc.resv}
			snap.Jobs = []Job{job(1, 1, 1, "h100", time.Hour)}
			d := decision(t, Schedule(snap, DefaultConfig(), t0), 1)
			if tc.reason == "" {
				if d.Action != ActionStart {
					t.Fatalf("got %s/%s (%s), want it started", d.Action, d.Reason, d.Detail)
				}
				return
			}
			if d.Reason != tc.reason || d.Detail != tc.detail || !d.StartKnown {
				t.Fatalf("got %s %q known=%v, want %s %q with an expected start", d.Reason, d.Detail, d.StartKnown, tc.reason, tc.detail)
			}
		})
	}
	// A named node drained: Slurm's "UnavailableNodes:n1".
	snap := snapshot(gpuNode(t, "n1", "h100"), gpuNode(t, "n2", "h100"))
	snap.Nodes[0].State = NodeDrain
	named := job(1, 1, 1, "h100", time.Hour)
	named.NodeList = []string{"n1"}
	snap.Jobs = []Job{named}
	if d := decision(t, Schedule(snap, DefaultConfig(), t0), 1); d.Reason != ReasonReqNodeNotAvail || d.Detail != "UnavailableNodes:n1" {
		t.Errorf("-w on a drained node: %s %q, want ReqNodeNotAvail \"UnavailableNodes:n1\"", d.Reason, d.Detail)
	}
	// Busy nodes with no reservation stay Resources.
	snap = snapshot(gpuNode(t, "n1", "h100"))
	snap.Jobs = []Job{busy(90, "n1", []int{0, 1, 2, 3, 4, 5, 6, 7}, topology.NewCPUSet(0), 0, t0.Add(time.Hour)), job(1, 1, 1, "h100", time.Hour)}
	if d := decision(t, Schedule(snap, DefaultConfig(), t0), 1); d.Reason != ReasonResources {
		t.Errorf("behind a running job: %s (%s), want Resources", d.Reason, d.Detail)
	}
}
