package core

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/parityhpc/parity/scheduler/policy"
	"github.com/parityhpc/parity/topology"
)

// TestMaintReservation: jobs that would still run when a maintenance
// window starts do not start on its nodes; shorter ones backfill; the
// blocked job's expected start is after the window; Explain names it.
func TestMaintReservation(t *testing.T) {
	maint := Reservation{Name: "fw-upgrade", Start: t0.Add(2 * time.Hour), End: t0.Add(4 * time.Hour), Nodes: []string{"n1"}, Flags: ResvMaint}
	snap := snapshot(gpuNode(t, "n1", "h100"))
	snap.Reservations = []Reservation{maint}
	long := job(1, 1, 8, "h100", 3*time.Hour)
	short := job(2, 1, 8, "h100", time.Hour)
	unlimited := job(3, 1, 1, "h100", 0)
	long.Submit, short.Submit, unlimited.Submit = t0.Add(-3*time.Hour), t0.Add(-2*time.Hour), t0.Add(-time.Hour)
	snap.Jobs = []Job{long, short, unlimited}
	plan := Schedule(snap, DefaultConfig(), t0)
	mustStart(t, plan, 2)
	d := decision(t, plan, 1)
	if d.Action == ActionStart || !d.StartKnown || d.ExpectedStart.Before(maint.End) {
		t.Fatalf("3 h job: %s expected %v, want after the window ends at %v", d.Action, d.ExpectedStart, maint.End)
	}
	if d := decision(t, plan, 3); d.Action == ActionStart {
		t.Fatal("a job without a time limit started on a node with a maintenance window ahead")
	}
	snap.Jobs = []Job{long}
	ex, err := Explain(snap, DefaultConfig(), t0, 1)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(ex.String(), "maintenance reservation fw-upgrade holds n1 from") || !strings.Contains(ex.String(), "must end before it starts") {
		t.Fatalf("explanation does not name the window:\n%s", ex)
	}
	if !strings.Contains(ex.String(), "with --time=02:00:00") {
		t.Errorf("explanation should suggest a shorter limit:\n%s", ex)
	}
}

// TestTRESReservation: a reservation of 4 GPUs of a node keeps them for
// its members (who are confined to them) while others use the rest.
func TestTRESReservation(t *testing.T) {
	snap := snapshot(gpuNode(t, "n1", "h100"))
	r, err := PlaceReservation(snap, ResvRequest{Name: "team", Start: t0.Add(-time.Minute), End: t0.Add(8 * time.Hour),
		Accounts: []string{"physics"}, TRES: policy.TRES{"gres/gpu:h100": 4, "cpu": 16}})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Slices) != 1 || len(r.Slices[0].Devices) != 4 || r.Slices[0].CPUs != 16 {
		t.Fatalf("placed %+v", r.Slices)
	}
	if err := CheckReservation(snap, r); err != nil {
		t.Fatalf("a placed reservation fails its check: %v", err)
	}
	snap.Reservations = []Reservation{r}
	reserved := map[string]bool{}
	for _, u := range r.Slices[0].Devices {
		reserved[u] = true
	}
	tests := []struct {
		name      string
		mod       func(j *Job)
		start     bool
		inReserve bool
	}{
		{"member gets reserved GPUs", func(j *Job) { j.Reservation = "team" }, true, true},
		{"member is confined to the reservation", func(j *Job) { j.Reservation = "team"; j.GRES.PerNode[0].Count = 5 }, false, false},
		{"others get the rest", func(j *Job) { j.Account = "bio" }, true, false},
		{"others cannot use the reserved GPUs", func(j *Job) { j.Account = "bio"; j.GRES.PerNode[0].Count = 5 }, false, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			j := job(1, 1, 4, "h100", time.Hour)
			tc.mod(&j)
			snap.Jobs = []Job{j}
			plan := Schedule(snap, DefaultConfig(), t0)
			if !tc.start {
				if len(plan.Starts) != 0 {
					t.Fatalf("started on %v", plan.Starts[0].Nodes)
				}
				return
			}
			s := mustStart(t, plan, 1)
			for _, u := range s.Nodes[0].Devices {
				if reserved[u] != tc.inReserve {
					t.Fatalf("got device %s (reserved=%v), want reserved=%v", u, reserved[u], tc.inReserve)
				}
			}
		})
	}
	// Explain names the reservation holding the GPUs a non-member lacks.
	j := job(1, 1, 6, "h100", time.Hour)
	j.Account = "bio"
	snap.Jobs = []Job{j}
	ex, err := Explain(snap, DefaultConfig(), t0, 1)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(ex.String(), "admin reservation team holds part of n1 (4 GPU(s), 16 CPUs)") {
		t.Fatalf("explanation does not name the TRES reservation:\n%s", ex)
	}
}

func TestCheckReservation(t *testing.T) {
	snap := snapshot(gpuNode(t, "n1", "h100"), gpuNode(t, "n2", "h100"))
	cpus := snap.Nodes[0].Shape.CPUs.First(4)
	snap.Jobs = []Job{busy(10, "n1", []int{0, 1}, cpus, 0, t0.Add(3*time.Hour))}
	snap.Reservations = []Reservation{{Name: "other", Start: t0.Add(time.Hour), End: t0.Add(2 * time.Hour), Nodes: []string{"n2"}}}
	at := func(h int) time.Time { return t0.Add(time.Duration(h) * time.Hour) }
	tests := []struct {
		name    string
		r       Reservation
		mention string // "" = valid
	}{
		{"free node", Reservation{Name: "a", Start: at(1), End: at(2), Nodes: []string{"n2"}, Flags: ResvMaint}, ""},
		{"after the running job", Reservation{Name: "a", Start: at(30), End: at(31), Nodes: []string{"n1"}}, ""},
		{"running job overlaps", Reservation{Name: "a", Start: at(1), End: at(2), Nodes: []string{"n1"}}, "running job 10 on n1 would still run at its start"},
		{"IGNORE_JOBS", Reservation{Name: "a", Start: at(1), End: at(2), Nodes: []string{"n1"}, Flags: ResvIgnoreJobs}, ""},
		{"slice of free GPUs beside a running job", Reservation{Name: "a", Start: at(1), End: at(2), Slices: []ResvSlice{{Node: "n1", Devices: []string{"n1-gpu4"}}}}, ""},
		{"slice of a busy GPU", Reservation{Name: "a", Start: at(1), End: at(2), Slices: []ResvSlice{{Node: "n1", Devices: []string{"n1-gpu1"}}}}, "running job 10"},
		{"CPU slice beside a running job", Reservation{Name: "a", Start: at(1), End: at(2), Slices: []ResvSlice{{Node: "n1", CPUs: 60}}}, ""},
		{"CPU slice larger than what running jobs leave", Reservation{Name: "a", Start: at(1), End: at(2), Slices: []ResvSlice{{Node: "n1", CPUs: 61}}}, "running jobs on n1 would still hold 4 CPUs"},
		{"overlaps another reservation", Reservation{Name: "a", Start: at(1), End: at(3), Nodes: []string{"n2"}}, "overlaps reservation other on n2"},
		{"MAINT may overlap", Reservation{Name: "a", Start: at(1), End: at(3), Nodes: []string{"n2"}, Flags: ResvMaint}, ""},
		{"no name", Reservation{Start: at(1), End: at(2), Nodes: []string{"n2"}}, "ReservationName is empty"},
		{"end before start", Reservation{Name: "a", Start: at(2), End: at(1), Nodes: []string{"n2"}}, "is not after StartTime"},
		{"nothing reserved", Reservation{Name: "a", Start: at(1), End: at(2)}, "reserves no nodes and no TRES"},
		{"unknown node", Reservation{Name: "a", Start: at(1), End: at(2), Nodes: []string{"zz"}}, `unknown node "zz"`},
		{"unknown device", Reservation{Name: "a", Start: at(1), End: at(2), Slices: []ResvSlice{{Node: "n2", Devices: []string{"x"}}}}, `node n2 has no device "x"`},
		{"too many CPUs", Reservation{Name: "a", Start: at(1), End: at(2), Slices: []ResvSlice{{Node: "n2", CPUs: 65}}}, "65 CPUs on n2, which has 64"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckReservation(snap, tc.r)
			if tc.mention == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if !errors.Is(err, ErrReservation) || !strings.Contains(err.Error(), tc.mention) {
				t.Fatalf("error %v, want ErrReservation naming %q", err, tc.mention)
			}
		})
	}
}

func TestPlaceReservation(t *testing.T) {
	snap := snapshot(gpuNode(t, "n1", "h100"), gpuNode(t, "n2", "h100"), gpuNode(t, "n3", "a100"))
	snap.Jobs = []Job{busy(10, "n1", []int{0, 1, 2, 3, 4, 5}, topology.CPURange(0, 7), 0, t0.Add(3*time.Hour))}
	req := func(tres string, flags ResvFlags) ResvRequest {
		v, err := policy.ParseTRES(tres)
		if err != nil {
			t.Fatal(err)
		}
		return ResvRequest{Name: "r", Start: t0.Add(time.Hour), End: t0.Add(2 * time.Hour), Users: []string{"alice"}, TRES: v, Flags: flags}
	}
	tests := []struct {
		name    string
		req     ResvRequest
		nodes   []string // whole nodes
		gpusOn  map[string]int
		mention string
	}{
		{name: "whole nodes skip busy ones", req: req("node=2", 0), nodes: []string{"n2", "n3"}},
		{name: "whole nodes with IGNORE_JOBS", req: req("node=2", ResvIgnoreJobs), nodes: []string{"n1", "n2"}},
		{name: "typed GPUs on the fewest nodes", req: req("gres/gpu:h100=10", 0), gpusOn: map[string]int{"n2": 8, "n1": 2}},
		{name: "typed GPUs of another type", req: req("gres/gpu:a100=3", 0), gpusOn: map[string]int{"n3": 3}},
		{name: "not enough free", req: req("gres/gpu:h100=11", 0), mention: "short by gpus=1"},
		{name: "too many nodes", req: req("node=3", 0), mention: "needs 3 whole node(s)"},
		{name: "node with other TRES", req: req("node=1,cpu=4", 0), mention: "node= cannot be combined"},
		{name: "unplaceable TRES", req: req("license/x=1", 0), mention: "license/x cannot be reserved"},
		{name: "CPUs only", req: req("cpu=100", 0), gpusOn: map[string]int{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := PlaceReservation(snap, tc.req)
			if tc.mention != "" {
				if !errors.Is(err, ErrReservation) || !strings.Contains(err.Error(), tc.mention) {
					t.Fatalf("error %v, want one naming %q", err, tc.mention)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if err := CheckReservation(snap, r); err != nil {
				t.Fatalf("placed reservation fails its check: %v", err)
			}
			if strings.Join(r.Nodes, ",") != strings.Join(tc.nodes, ",") {
				t.Fatalf("whole nodes %v, want %v", r.Nodes, tc.nodes)
			}
			got := map[string]int{}
			cpus := 0
			for _, sl := range r.Slices {
				if len(sl.Devices) > 0 {
					got[sl.Node] = len(sl.Devices)
				}
				cpus += sl.CPUs
			}
			if tc.gpusOn != nil && len(got) != len(tc.gpusOn) {
				t.Fatalf("GPUs per node %v, want %v", got, tc.gpusOn)
			}
			for n, k := range tc.gpusOn {
				if got[n] != k {
					t.Fatalf("GPUs per node %v, want %v", got, tc.gpusOn)
				}
			}
			if want := tc.req.TRES["cpu"]; int64(cpus) != want {
				t.Fatalf("reserved %d CPUs, want %d", cpus, want)
			}
		})
	}
}

func TestParseResvFlags(t *testing.T) {
	f, err := ParseResvFlags("maint,IGNORE_JOBS")
	if err != nil || f != ResvMaint|ResvIgnoreJobs || f.String() != "MAINT,IGNORE_JOBS" {
		t.Fatalf("got %v %q %v", f, f.String(), err)
	}
	if _, err := ParseResvFlags("MAINT,FLEX"); !errors.Is(err, ErrReservation) || !strings.Contains(err.Error(), `flag "FLEX"`) {
		t.Fatalf("FLEX: %v", err)
	}
}

// TestDeadline: a job whose limit would carry it past its --deadline does
// not start (reason DeadLine); one that can end in time does.
func TestDeadline(t *testing.T) {
	for _, tc := range []struct {
		name     string
		limit    time.Duration
		deadline time.Duration
		start    bool
	}{
		{"ends in time", time.Hour, 2 * time.Hour, true},
		{"ends exactly at the deadline", time.Hour, time.Hour, true},
		{"would run past it", 3 * time.Hour, 2 * time.Hour, false},
		{"no time limit", 0, 2 * time.Hour, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			snap := snapshot(gpuNode(t, "n1", "h100"))
			j := job(1, 1, 1, "h100", tc.limit)
			j.Deadline = t0.Add(tc.deadline)
			snap.Jobs = []Job{j}
			plan := Schedule(snap, DefaultConfig(), t0)
			if tc.start {
				mustStart(t, plan, 1)
				return
			}
			if d := decision(t, plan, 1); d.Reason != ReasonDeadline || !strings.Contains(d.Detail, "cannot end by its deadline") {
				t.Fatalf("got %s (%s), want DeadLine", d.Reason, d.Detail)
			}
		})
	}
	// A blocked job gets no reservation that would end past its deadline.
	snap := snapshot(gpuNode(t, "n1", "h100"))
	j := job(1, 1, 8, "h100", time.Hour)
	j.Deadline = t0.Add(90 * time.Minute)
	snap.Jobs = []Job{busy(10, "n1", []int{0}, topology.CPURange(0, 0), 0, t0.Add(time.Hour)), j}
	snap.Jobs[0].TimeLimit = 2 * time.Hour // ends at t0+1h
	plan := Schedule(snap, DefaultConfig(), t0)
	if d := decision(t, plan, 1); d.Action == ActionReserve {
		t.Fatalf("reserved at %v though it would end past its deadline", d.ExpectedStart)
	}
}
