package chaos

import (
	"slices"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
)

func TestJudgeCell(t *testing.T) {
	for _, tc := range []struct {
		name string
		w    want
		o    outcome
		p    path
		ok   bool
		why  string
	}{
		{"allowed and done", allowed, outcome{ok: true, hasEffect: true, effect: true}, viaGRPC, true, ""},
		{"allowed read", allowed, outcome{ok: true}, viaCLI, true, ""},
		{"allowed but refused", allowed, outcome{code: codes.PermissionDenied, msg: "no"}, viaGRPC, false, "want allowed"},
		{"allowed, answered, nothing happened", allowed, outcome{ok: true, hasEffect: true}, viaHTTP, false, "no effect"},
		{"refused as wanted", refused(codes.NotFound), outcome{code: codes.NotFound, hasEffect: true}, viaGRPC, true, ""},
		{"refused with the wrong code", refused(codes.NotFound), outcome{code: codes.PermissionDenied}, viaGRPC, false, "want NotFound"},
		{"refused over HTTP with the wrong code", refused(codes.Unauthenticated), outcome{code: codes.PermissionDenied}, viaHTTP, false, "want Unauthenticated"},
		{"the CLI's code is not judged", refused(codes.NotFound), outcome{}, viaCLI, true, ""},
		{"refused but it happened", refused(codes.NotFound), outcome{code: codes.NotFound, hasEffect: true, effect: true}, viaGRPC, false, "took effect"},
		{"answered OK to a read it must refuse", refused(codes.NotFound), outcome{ok: true}, viaGRPC, false, "answered OK"},
		{"the CLI read answered OK", refused(codes.NotFound), outcome{ok: true}, viaCLI, false, "answered OK"},
		// scancel's habit: an unknown id (and so another user's job) is no error.
		{"the CLI's silent cancel that did nothing", refused(codes.NotFound), outcome{ok: true, hasEffect: true}, viaCLI, true, ""},
		{"the CLI's silent cancel that did something", refused(codes.NotFound), outcome{ok: true, hasEffect: true, effect: true}, viaCLI, false, "took effect"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ok, why := judgeCell(tc.w, tc.o, tc.p)
			if ok != tc.ok || !strings.Contains(why, tc.why) {
				t.Errorf("judgeCell = %v, %q; want %v with %q", ok, why, tc.ok, tc.why)
			}
		})
	}
}

func TestJudgeRefusal(t *testing.T) {
	mem := badInput{fields: []string{"mempercpu"}}
	for _, tc := range []struct {
		name string
		b    badInput
		code codes.Code
		msg  string
		want Verdict
	}{
		{"names the option", mem, codes.InvalidArgument, "--mem-per-cpu=4611686018427387904: 2^62 MiB × 4 CPUs per node is more than …", Pass},
		{"names the JSON field", mem, codes.InvalidArgument, `invalid value for int64 field memPerCpuMb: "9999"`, Pass},
		{"names another field", mem, codes.InvalidArgument, "--time=-5: requested time limit is invalid", Warn},
		{"accepted", mem, codes.OK, "", Fail},
		{"an internal error", mem, codes.Internal, "mem_per_cpu overflow", Fail},
		{"the controller gone", mem, codes.Unavailable, "connection refused", Fail},
		{"no field to name", badInput{}, codes.InvalidArgument, "not JSON", Pass},
		{"a permission refusal naming nice", badInput{fields: []string{"nice"}}, codes.PermissionDenied, "--nice=-1000: access/permission denied", Pass},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if v, why := judgeRefusal(tc.b, tc.code, tc.msg, 7); v != tc.want {
				t.Errorf("judgeRefusal = %s (%s), want %s", v, why, tc.want)
			}
		})
	}
}

// A GPU two running jobs hold, in the jobs' allocations or in a node's
// GPU holders, is reported once; finished jobs and idle GPUs are not.
func TestSharedGPUs(t *testing.T) {
	job := func(id uint64, state string, uuids ...string) *pb.Job {
		return &pb.Job{Id: id, State: state, Alloc: []*pb.NodeAlloc{{Node: "gpu1", Devices: uuids}}}
	}
	jobs := []*pb.Job{
		job(1, "RUNNING", "GPU-a", "GPU-b"),
		job(2, "COMPLETING", "GPU-b"),
		job(3, "COMPLETED", "GPU-a"), // ended: holds nothing
		job(4, "RUNNING", "GPU-c"),
	}
	nodes := []*pb.Node{{Name: "gpu1", Gpus: []*pb.GPU{
		{Uuid: "GPU-a", JobId: 1}, {Uuid: "GPU-b", JobId: 1}, {Uuid: "GPU-c", JobId: 5}, {Uuid: "GPU-d"},
	}}}
	got := sharedGPUs(jobs, nodes)
	want := []string{"GPU GPU-b held by jobs [1 2]", "GPU GPU-c held by jobs [4 5]"}
	if !slices.Equal(got, want) {
		t.Errorf("sharedGPUs = %q, want %q", got, want)
	}
	if got := sharedGPUs(jobs[:1], nodes[:0]); len(got) != 0 {
		t.Errorf("one job alone shares %q", got)
	}
}

func TestPatchConfig(t *testing.T) {
	in := "cluster: chaos\nheartbeatInterval: 1s\nnodeDownTimeout: 30s\npartitions:\n  - name: \"gpu\"\n    nodeDownTimeout: nested\n"
	got := patchConfig(in, map[string]string{"nodeDownTimeout": "4s", "minJobAge": "8s"})
	want := "cluster: chaos\nheartbeatInterval: 1s\nnodeDownTimeout: 4s\npartitions:\n  - name: \"gpu\"\n    nodeDownTimeout: nested\nminJobAge: 8s\n"
	if got != want {
		t.Errorf("patchConfig:\n%s\nwant:\n%s", got, want)
	}
}

func TestWithFlag(t *testing.T) {
	args := []string{"controller", "--config", "c.yaml", "--listen", "127.0.0.1:0", "--metrics-addr=off"}
	if got := withFlag(args, "--listen", "127.0.0.1:4000"); !slices.Equal(got, []string{"controller", "--config", "c.yaml", "--listen", "127.0.0.1:4000", "--metrics-addr=off"}) {
		t.Errorf("replace: %q", got)
	}
	if got := withFlag(args, "--metrics-addr", "127.0.0.1:0"); got[5] != "--metrics-addr=127.0.0.1:0" {
		t.Errorf("replace a --flag=value: %q", got)
	}
	if got := withFlag(args, "--address-file", "a"); !slices.Equal(got[len(got)-2:], []string{"--address-file", "a"}) || len(got) != len(args)+2 {
		t.Errorf("add: %q", got)
	}
	if args[4] != "127.0.0.1:0" {
		t.Errorf("withFlag changed its argument: %q", args)
	}
}

func TestProcReaders(t *testing.T) {
	status := []byte("Name:\tparity\nVmHWM:\t  123456 kB\nVmRSS:\t   65536 kB\n")
	if statusKB(status, "VmRSS:") != 65536 || statusKB(status, "VmHWM:") != 123456 || statusKB(status, "VmSwap:") != 0 {
		t.Errorf("statusKB read %d, %d, %d", statusKB(status, "VmRSS:"), statusKB(status, "VmHWM:"), statusKB(status, "VmSwap:"))
	}
	if !zombie([]byte("42 (par ity) Z 1 2")) || zombie([]byte("42 (a) b) S 1 2")) || zombie([]byte("42 (x")) {
		t.Error("zombie misreads a stat line")
	}
	if got := splitNUL([]byte("parity\x00agent\x00--node\x00cpu1\x00")); !slices.Equal(got, []string{"parity", "agent", "--node", "cpu1"}) {
		t.Errorf("splitNUL = %q", got)
	}
}

func TestAnswerReaders(t *testing.T) {
	if squash("--mem-per-cpu") != "mempercpu" || squash("memPerCpuMb") != "mempercpumb" || squash("mem_per_cpu_mb") != "mempercpumb" {
		t.Errorf("squash: %q %q %q", squash("--mem-per-cpu"), squash("memPerCpuMb"), squash("mem_per_cpu_mb"))
	}
	for _, c := range []codes.Code{codes.OK, codes.NotFound, codes.PermissionDenied, codes.Unauthenticated, codes.ResourceExhausted} {
		if got, ok := codeNamed(c.String()); !ok || got != c {
			t.Errorf("codeNamed(%q) = %v, %v", c.String(), got, ok)
		}
	}
	if _, ok := codeNamed("PERMISSION_DENIED"); ok {
		t.Error("codeNamed took a name the JSON API does not send")
	}
	if acceptedID(`{"jobId":"1234","message":""}`) != 1234 || acceptedID(`{"code":"InvalidArgument"}`) != 0 {
		t.Error("acceptedID misreads an answer")
	}
}

// Every action of the matrix can run on every path it names, for
// identities the matrix knows, and expects a code for each refusal.
func TestAuthzMatrixIsWellFormed(t *testing.T) {
	ids := identities()
	cells := 0
	for _, a := range authzActions() {
		if len(a.who) == 0 || len(a.whoOrder()) != len(a.who) || a.setup == nil {
			t.Errorf("%s: identities %v (in order %v), setup %v", a.name, a.who, a.whoOrder(), a.setup != nil)
		}
		for w, exp := range a.who {
			if _, ok := ids[w]; !ok {
				t.Errorf("%s: unknown identity %q", a.name, w)
			}
			if !exp.allow && exp.code == codes.OK {
				t.Errorf("%s as %s: a refusal without a code", a.name, w)
			}
		}
		for _, p := range a.paths {
			if p == viaGRPC && a.grpc == nil || p == viaCLI && a.cli == nil || p == viaHTTP && a.body == nil {
				t.Errorf("%s: no way to run it over %s", a.name, p)
			}
		}
		cells += len(a.who) * len(a.paths)
	}
	if cells < 80 {
		t.Errorf("the matrix has %d cells; the issue's had 133 refusals, keep it broad", cells)
	}
}

// Every bad input is sendable on some path and, but for bodies that are
// not a message at all, names the field it breaks.
func TestBadInputsAreWellFormed(t *testing.T) {
	seen := map[string]bool{}
	for _, b := range badInputs() {
		if seen[b.what] {
			t.Errorf("%q twice", b.what)
		}
		seen[b.what] = true
		if (b.change == nil) == (b.raw == "") {
			t.Errorf("%q: wants exactly one of a spec change or a raw body", b.what)
		}
		if b.change != nil && len(b.fields) == 0 {
			t.Errorf("%q: names no field", b.what)
		}
		if s := b.spec("x"); b.change != nil && (s == nil || s.GetName() == "" && b.what != "empty name") {
			t.Errorf("%q: spec %v", b.what, s)
		}
	}
}
