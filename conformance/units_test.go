package conformance

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/onsi/ginkgo/v2/types"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/parityhpc/parity/reports"
	"github.com/parityhpc/parity/scheduler/api"
	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/vendors/contract"
)

// The suite reports each contract check under the id and description
// vendors/contract gives it, as parity conform driver does.
func TestContractSpecsUseTheContractsIDs(t *testing.T) {
	specs := map[string]specDef{}
	for _, d := range allSpecs() {
		if d.Area == reports.AreaDriverContract {
			specs[d.ID] = d
		}
	}
	for _, c := range contract.Checks() {
		d, ok := specs[contract.SpecID(c.Name)]
		switch {
		case !ok:
			t.Errorf("no suite spec %q for contract check %q", contract.SpecID(c.Name), c.Name)
		case d.Name != c.Description:
			t.Errorf("spec %s is named %q; the contract describes it as %q", d.ID, d.Name, c.Description)
		}
		delete(specs, contract.SpecID(c.Name))
	}
	for id := range specs {
		if id != contract.SpecID("lab-device-majors") {
			t.Errorf("driver-contract spec %q is no contract check", id)
		}
	}
}

func TestFewestLeaves(t *testing.T) {
	leaves := map[string]int{"a1": 1, "a2": 1, "a3": 1, "b1": 2, "c1": 3}
	leafOf := func(n string) (int, bool) { l, ok := leaves[n]; return l, ok }
	tests := []struct {
		nodes []string
		k     int
		want  int
	}{
		{[]string{"a1", "a2", "b1"}, 2, 1},
		{[]string{"a1", "b1", "c1"}, 2, 2},
		{[]string{"a1", "a2", "a3", "b1"}, 4, 2},
		{[]string{"a1", "x", "y"}, 3, 3}, // nodes outside the tree are a leaf each
		{[]string{"a1"}, 1, 1},
	}
	for _, tc := range tests {
		if got := fewestLeaves(tc.nodes, tc.k, leafOf); got != tc.want {
			t.Errorf("fewestLeaves(%v, %d) = %d, want %d", tc.nodes, tc.k, got, tc.want)
		}
	}
}

func job(id uint64, start, end int, allocs ...*pb.NodeAlloc) *pb.Job {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	return &pb.Job{Id: id, StartTime: api.Timestamp(t0.Add(time.Duration(start) * time.Second)),
		EndTime: api.Timestamp(t0.Add(time.Duration(end) * time.Second)), Alloc: allocs}
}

func TestOverlaps(t *testing.T) {
	n1 := func(cpus string, gpus ...string) *pb.NodeAlloc {
		return &pb.NodeAlloc{Node: "n1", Cpus: cpus, Devices: gpus}
	}
	n2 := func(cpus string, gpus ...string) *pb.NodeAlloc {
		return &pb.NodeAlloc{Node: "n2", Cpus: cpus, Devices: gpus}
	}
	tests := []struct {
		name string
		jobs []*pb.Job
		want int
	}{
		{"disjoint devices and cpus at once", []*pb.Job{job(1, 0, 10, n1("0-3", "g0")), job(2, 5, 15, n1("4-7", "g1"))}, 0},
		{"same GPU at once", []*pb.Job{job(1, 0, 10, n1("0-3", "g0")), job(2, 5, 15, n1("4-7", "g0"))}, 1},
		{"same CPUs at once", []*pb.Job{job(1, 0, 10, n1("0-3")), job(2, 5, 15, n1("2-5"))}, 1},
		{"same GPU one after the other", []*pb.Job{job(1, 0, 10, n1("0-3", "g0")), job(2, 10, 15, n1("0-3", "g0"))}, 0},
		{"same GPU name on another node", []*pb.Job{job(1, 0, 10, n1("0", "g0")), job(2, 0, 10, n2("0", "g0"))}, 0},
		{"GPU and CPUs shared", []*pb.Job{job(1, 0, 10, n1("0-3", "g0")), job(2, 1, 2, n1("3", "g0"))}, 2},
	}
	for _, tc := range tests {
		if got := overlaps(tc.jobs); len(got) != tc.want {
			t.Errorf("%s: %d overlaps %v, want %d", tc.name, len(got), got, tc.want)
		}
	}
}

func TestConvertEvents(t *testing.T) {
	at := api.Timestamp(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	evs := []*pb.Event{
		{Kind: "submit", JobId: 1, Time: at},
		{Kind: "start", JobId: 1, Nodes: []string{"a", "b"}, Time: at},
		{Kind: "requeue", JobId: 1, Nodes: []string{"a"}, Reason: "admin", Time: at},
		{Kind: "drain", Node: "a", Reason: "xid 79", Fields: map[string]string{"devices": "GPU-1"}, Time: at},
		{Kind: "node_fail", Node: "b", Time: at},
	}
	got := convertEvents(evs, map[string]string{"GPU-1": "3"})
	var kinds []string
	for _, e := range got {
		kinds = append(kinds, e.Node+":"+e.Kind+":"+e.Job+":"+e.GPU)
	}
	want := []string{"a:job-start:1:", "b:job-start:1:", "a:job-end:1:", "a:requeue:1:", "a:drain::3", "b:note::"}
	if !slices.Equal(kinds, want) {
		t.Errorf("timeline %v, want %v", kinds, want)
	}
	if got[len(got)-1].Text != "node_fail:" {
		t.Errorf("note text %q", got[len(got)-1].Text)
	}
}

func TestStatusOf(t *testing.T) {
	tests := []struct {
		state   types.SpecState
		errored bool
		want    reports.Status
	}{
		{types.SpecStatePassed, false, reports.StatusPassed},
		{types.SpecStateFailed, false, reports.StatusFailed},
		{types.SpecStateFailed, true, reports.StatusError},
		{types.SpecStateSkipped, false, reports.StatusSkipped},
		{types.SpecStatePending, false, reports.StatusSkipped},
		{types.SpecStatePanicked, false, reports.StatusError},
		{types.SpecStateTimedout, false, reports.StatusError},
		{types.SpecStateInterrupted, false, reports.StatusError},
	}
	for _, tc := range tests {
		if got := statusOf(types.SpecReport{State: tc.state}, tc.errored); got != tc.want {
			t.Errorf("statusOf(%v, errored=%v) = %s, want %s", tc.state, tc.errored, got, tc.want)
		}
	}
}

func TestVendorResultCarriesReasonsEvidenceAndObservations(t *testing.T) {
	st := &runState{records: map[specKey]*specRecord{}}
	k := specKey{ID: "isolation/cpuset", Vendor: "amd"}
	st.records[k] = &specRecord{obs: map[string]string{"cpuset": "other"}, evidence: []reports.Evidence{{Kind: "job", Text: "job 3"}}}
	failed := types.SpecReport{State: types.SpecStateFailed, RunTime: time.Second,
		Failure: types.Failure{Message: "Cpus_allowed_list differs\nExpected…"}}
	r := st.vendorResult(k, failed)
	if r.Status != reports.StatusFailed || r.Reason != "Cpus_allowed_list differs" || r.Area != reports.AreaIsolation {
		t.Errorf("failed result %+v", r)
	}
	if len(r.Evidence) != 2 || r.Evidence[0].Kind != "failure" || r.Observations["cpuset"] != "other" {
		t.Errorf("evidence %v observations %v", r.Evidence, r.Observations)
	}
	skipped := st.vendorResult(k, types.SpecReport{State: types.SpecStateSkipped, Failure: types.Failure{Message: "no GPUs"}})
	if skipped.Reason != "no GPUs" || skipped.Observations != nil || skipped.Evidence != nil {
		t.Errorf("skipped result %+v", skipped)
	}
	silent := st.vendorResult(k, types.SpecReport{State: types.SpecStateSkipped})
	if silent.Reason == "" {
		t.Error("a skip without a message got no reason")
	}
}

func TestFindProcs(t *testing.T) {
	proc := t.TempDir()
	for pid, argv := range map[string]string{"10": "sleep\x0097.123\x00", "11": "sleep\x0097.1234\x00", "12": "sh\x00-c\x00sleep 97.123\x00",
		"13": "probe\x00procs\x0097.123\x00", "self": "x\x00"} {
		if err := os.MkdirAll(filepath.Join(proc, pid), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(proc, pid, "cmdline"), []byte(argv), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := findProcs(proc, "97.123", 13)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, []string{"10: sleep 97.123"}) {
		t.Errorf("findProcs = %v, want only pid 10 (whole-argument match, not itself)", got)
	}
}

func TestProbeCommands(t *testing.T) {
	status := filepath.Join(t.TempDir(), "status")
	if err := os.WriteFile(status, []byte("Name:\tx\nCpus_allowed:\tff\nCpus_allowed_list:\t0-7\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := allowedCPUs(status); err != nil || got != "0-7" {
		t.Errorf("allowedCPUs = %q, %v", got, err)
	}
	tests := []struct {
		args []string
		code int
		out  string
	}{
		{[]string{"mem", "2"}, 0, "touched 2 MB"},
		{[]string{"mem", "zero"}, 1, ""},
		{[]string{"procs"}, 1, ""},
		{[]string{"nonsense"}, 1, ""},
		{nil, 2, ""},
	}
	for _, tc := range tests {
		var out, errOut bytes.Buffer
		code := ProbeMain(tc.args, &out, &errOut)
		if code != tc.code || !strings.Contains(out.String(), tc.out) {
			t.Errorf("probe %v: exit %d %q (%s), want %d %q", tc.args, code, out.String(), errOut.String(), tc.code, tc.out)
		}
	}
}

func TestShellQuoteSurvivesTheShell(t *testing.T) {
	args := []string{"/path with space/probe", "it's", `"q"`, "$HOME", "a,b"}
	out, err := exec.Command("/bin/sh", "-c", "printf '%s\\n' "+shellQuote(args)).Output()
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n"); !slices.Equal(got, args) {
		t.Errorf("sh saw %q, want %q", got, args)
	}
}

func TestParseVendorsFile(t *testing.T) {
	tests := []struct {
		name, text, err string
		vendors         int
	}{
		{"two vendors", "vendors:\n  - name: nvidia\n    partition: gpu\n    feature: h100\n  - name: cpu\n    partition: cpu\n", "", 2},
		{"env override", "vendors:\n  - name: acme\n    partition: p\n    visibleDevicesEnv: [ACME_VISIBLE]\n", "", 1},
		{"empty", "vendors: []\n", "name at least one vendor", 0},
		{"no partition", "vendors:\n  - name: amd\n", "vendors[0].partition", 0},
		{"twice", "vendors:\n  - name: amd\n    partition: a\n  - name: amd\n    partition: b\n", "vendors[1].name", 0},
		{"unknown field", "vendors:\n  - name: amd\n    partitions: a\n", "partitions", 0},
	}
	for _, tc := range tests {
		f, err := ParseVendorsFile("v.yaml", []byte(tc.text))
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.err == "" && len(f.Vendors) != tc.vendors:
			t.Errorf("%s: %d vendors, want %d", tc.name, len(f.Vendors), tc.vendors)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err) || !errors.Is(err, ErrVendorsFile)):
			t.Errorf("%s: error %v, want one naming %q", tc.name, err, tc.err)
		}
	}
}

func TestOrdinals(t *testing.T) {
	for k, want := range map[int]string{0: "", 1: "0", 3: "0,1,2"} {
		if got := Ordinals(k); got != want {
			t.Errorf("Ordinals(%d) = %q, want %q", k, got, want)
		}
	}
}

func TestReclaimTooSlow(t *testing.T) {
	policy := func(enabled, dry bool, idle, grace, minRun time.Duration) *pb.ReclamationPolicy {
		return &pb.ReclamationPolicy{Enabled: enabled, DryRun: dry, IdleFor: durationpb.New(idle), Grace: durationpb.New(grace), MinRuntime: durationpb.New(minRun)}
	}
	wait := 40 * time.Second
	tests := []struct {
		name string
		p    *pb.ReclamationPolicy
		want string // a part of the reason; "" = watchable
	}{
		{"lab policy", policy(true, false, 20*time.Second, 15*time.Second, 0), ""},
		{"no policy (an old controller)", nil, "off"},
		{"off", policy(false, false, 20*time.Second, 15*time.Second, 0), "off"},
		{"dry run", policy(true, true, 20*time.Second, 15*time.Second, 0), "dry-run"},
		{"production idle window", policy(true, false, time.Hour, 10*time.Minute, 0), "after 1h0m0s"},
		{"long minimum runtime", policy(true, false, 20*time.Second, 15*time.Second, 5*time.Minute), "after 5m0s"},
		{"long grace", policy(true, false, 20*time.Second, 2*time.Minute, 0), "2m0s later"},
	}
	for _, tc := range tests {
		got := reclaimTooSlow(tc.p, wait)
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}
