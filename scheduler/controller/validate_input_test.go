package controller

import (
	"context"
	"encoding/json"
	"math"
	"net/http"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/parityhpc/parity/scheduler/api"
	"github.com/parityhpc/parity/scheduler/api/jsonapi"
	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/auth"
)

// limitsCluster is testCluster with a small MaxScriptSize and MaxJobCount,
// so that the tests can reach them.
const limitsCluster = testCluster + "maxScriptSize: 4096\nmaxJobCount: 3\n"

// inputJob is a batch job every check accepts, in partition cpu, whose
// node has not registered (so no capacity check hides a bound's).
func inputJob() *jsonapi.JobSpec {
	return &jsonapi.JobSpec{Name: "ok", Partition: "cpu", Script: "#!/bin/sh\ntrue\n", TimeLimitSeconds: 600}
}

// answer is a refusal's gRPC code name and message ("OK", "" when accepted).
type answer struct{ code, msg string }

// submitBoth submits spec over gRPC and over HTTP (POST /v1/jobs, JSON) as
// user and returns each path's answer.
func submitBoth(t *testing.T, h *harness, user string, role auth.Role, spec *jsonapi.JobSpec) map[string]answer {
	t.Helper()
	_, err := h.as(user, role).Submit(context.Background(), api.JobSpecFromJSON(spec))
	out := map[string]answer{"gRPC": {status.Code(err).String(), status.Convert(err).Message()}}
	st, b := postSubmit(t, http.DefaultClient, "http://"+h.c.Addr(), "Bearer "+h.token(user, role, ""), http.MethodPost,
		jsonBody(t, jsonapi.SubmitRequest{Spec: spec}))
	if st == http.StatusOK {
		out["HTTP"] = answer{codes.OK.String(), ""}
		return out
	}
	var e jsonapi.Error
	if err := json.Unmarshal(b, &e); err != nil {
		t.Fatalf("HTTP status %d, body not a JSON error: %s", st, b)
	}
	out["HTTP"] = answer{e.Code, e.Message}
	return out
}

// TestSubmitRefusesBadInput: what no cluster accepts is refused at submit,
// the field and value named, with the same code and words over gRPC and
// over HTTP JSON: overflowing products, negative or unbounded quantities,
// control characters that would forge squeue and scontrol lines, a batch
// job without a usable script, an array past MaxArraySize.
func TestSubmitRefusesBadInput(t *testing.T) {
	h := startController(t, limitsCluster)
	h.register("n1", 4)
	tests := []struct {
		name string
		mod  func(s *jsonapi.JobSpec)
		code codes.Code
		want string
	}{
		{"mem-per-cpu 2^62 × 4 CPUs", func(s *jsonapi.JobSpec) { s.MemPerCPUMB, s.CPUsPerTask = 1<<62, 4 }, codes.InvalidArgument,
			"--mem-per-cpu=4611686018427387904: must be at most 1099511627776"},
		{"mem-per-cpu MaxInt64 × 2 CPUs", func(s *jsonapi.JobSpec) { s.MemPerCPUMB, s.CPUsPerTask = math.MaxInt64, 2 }, codes.InvalidArgument,
			"--mem-per-cpu=9223372036854775807: must be at most"},
		{"mem-per-cpu × CPUs past 1 EiB per node", func(s *jsonapi.JobSpec) { s.MemPerCPUMB, s.CPUsPerTask = 1<<40, 16 }, codes.InvalidArgument,
			"--mem-per-cpu=1099511627776: 1099511627776 MiB × 16 CPUs per node is more than 1099511627776 MiB per node"},
		{"mem-per-gpu × GPUs", func(s *jsonapi.JobSpec) {
			s.MemPerGPUMB, s.GRES = 1<<39, &jsonapi.GRESRequest{PerNode: []jsonapi.GRESTerm{{Name: "gpu", Count: 4}}}
		}, codes.InvalidArgument, "--mem-per-gpu=549755813888: 549755813888 MiB × 4 GPUs per node"},
		{"negative memory", func(s *jsonapi.JobSpec) { s.MemPerNodeMB = -5 }, codes.InvalidArgument, "--mem=-5: must be within 0..1099511627776 MiB"},
		{"negative maximum nodes", func(s *jsonapi.JobSpec) { s.MaxNodes = -1 }, codes.InvalidArgument, "maxNodes=-1: must not be negative"},
		{"maximum nodes below minimum", func(s *jsonapi.JobSpec) { s.Partition, s.Nodes, s.MaxNodes = "gpu", 2, 1 },
			codes.InvalidArgument, "maxNodes=1: the maximum node count is below --nodes=2"},
		{"negative minimum time", func(s *jsonapi.JobSpec) { s.TimeMinSeconds = -60 }, codes.InvalidArgument, "--time-min=-60: must not be negative"},
		{"minimum time over the limit", func(s *jsonapi.JobSpec) { s.TimeMinSeconds = 3600 }, codes.InvalidArgument,
			"--time-min=01:00:00: invalid time-min specification: more than --time=00:10:00"},
		{"time limit past time.Duration", func(s *jsonapi.JobSpec) { s.TimeLimitSeconds = 1 << 62 }, codes.InvalidArgument,
			"--time=4611686018427387904: requested time limit is invalid"},
		{"tasks past the bound", func(s *jsonapi.JobSpec) { s.NTasks = 1<<24 + 1 }, codes.InvalidArgument, "--ntasks=16777217: must be at most 16777216"},
		{"tasks × CPUs per node", func(s *jsonapi.JobSpec) { s.NTasksPerNode, s.CPUsPerTask = 1<<13, 1<<12 }, codes.InvalidArgument,
			"--cpus-per-task=4096: 8192 task(s) per node × 4096 CPUs is more than 16777216 CPUs per node"},
		{"GPUs per task × tasks", func(s *jsonapi.JobSpec) {
			s.NTasksPerNode, s.GRES = 4, &jsonapi.GRESRequest{PerTask: []jsonapi.GRESTerm{{Name: "gpu", Count: 1 << 62}}}
		}, codes.InvalidArgument, "--gres=gpu:4611686018427387904: the GPU count must be within 0..1048576"},
		{"CPUs per GPU × GPUs", func(s *jsonapi.JobSpec) {
			s.CPUsPerGPU, s.GRES = 1<<24, &jsonapi.GRESRequest{PerJob: []jsonapi.GRESTerm{{Name: "gpu", Count: 2}}}
		}, codes.InvalidArgument, "--cpus-per-gpu=16777216: 2 GPUs per node × 16777216 CPUs"},
		{"array past MaxArraySize", func(s *jsonapi.JobSpec) { s.Array = "0-1000000" }, codes.InvalidArgument,
			`--array="0-1000000": invalid array "0-1000000": term "0-1000000": index 1000000 is above the maximum 1000 (MaxArraySize-1)`},
		{"negative nice by a user", func(s *jsonapi.JobSpec) { s.Nice = -1 }, codes.PermissionDenied,
			"--nice=-1: access/permission denied: only operators may set a negative nice"},
		{"name forging a line", func(s *jsonapi.JobSpec) { s.Name = "x\nJobState=COMPLETED UserId=root(0)" }, codes.InvalidArgument,
			`--job-name="x\nJobState=COMPLETED UserId=root(0)": contains a control character (U+000A at byte 1)`},
		{"name with NUL", func(s *jsonapi.JobSpec) { s.Name = "a\x00b" }, codes.InvalidArgument, `--job-name="a\x00b": contains a control character (U+0000`},
		{"name too long", func(s *jsonapi.JobSpec) { s.Name = strings.Repeat("n", 1025) }, codes.InvalidArgument,
			"--job-name: 1025 bytes is more than the limit of 1024"},
		{"comment with a carriage return", func(s *jsonapi.JobSpec) { s.Comment = "ok\rJobState=COMPLETED" }, codes.InvalidArgument, `--comment="ok\rJobState=COMPLETED"`},
		{"account with a newline", func(s *jsonapi.JobSpec) { s.Account = "physics\n" }, codes.InvalidArgument, `--account="physics\n": contains a control character`},
		{"partition with an escape", func(s *jsonapi.JobSpec) { s.Partition = "cpu\x1b[2J" }, codes.InvalidArgument, `--partition="cpu\x1b[2J"`},
		{"QOS with a tab", func(s *jsonapi.JobSpec) { s.QOS = "high\t" }, codes.InvalidArgument, `--qos="high\t"`},
		{"output path with a newline", func(s *jsonapi.JobSpec) { s.Output = "/tmp/o\n.out" }, codes.InvalidArgument, `--output="/tmp/o\n.out"`},
		{"working directory with C1 control", func(s *jsonapi.JobSpec) { s.Workdir = "/tmp/\u009b" }, codes.InvalidArgument, `--chdir="/tmp/\u009b"`},
		{"empty script", func(s *jsonapi.JobSpec) { s.Script = "" }, codes.InvalidArgument, "script: the batch script is empty"},
		{"blank script", func(s *jsonapi.JobSpec) { s.Script = " \n\n" }, codes.InvalidArgument, "script: the batch script is empty"},
		{"script without #!", func(s *jsonapi.JobSpec) { s.Script = "echo hi\n" }, codes.InvalidArgument, "script: this does not look like a batch script"},
		{"script with NUL", func(s *jsonapi.JobSpec) { s.Script = "#!/bin/sh\n\x00\n" }, codes.InvalidArgument, "script: the batch script contains a NUL character"},
		{"script past MaxScriptSize", func(s *jsonapi.JobSpec) { s.Script = "#!/bin/sh\n" + strings.Repeat("#", 4096) }, codes.InvalidArgument,
			"script: 4106 bytes is more than MaxScriptSize=4096"},
		{"variable name with =", func(s *jsonapi.JobSpec) { s.Env = map[string]string{"A=B": "1"} }, codes.InvalidArgument, `--export: variable name "A=B"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			spec := inputJob()
			tc.mod(spec)
			for path, a := range submitBoth(t, h, "alice", auth.RoleUser, spec) {
				if a.code != tc.code.String() || !strings.Contains(a.msg, tc.want) {
					t.Errorf("%s: %s %q\nwant %v containing %q", path, a.code, a.msg, tc.code, tc.want)
				}
			}
		})
	}
	if jobs, _ := h.as("root", auth.RoleAdmin).ListJobs(context.Background(), &pb.ListJobsRequest{AllStates: true}); len(jobs) != 0 {
		t.Fatalf("refused submissions left %d jobs behind", len(jobs))
	}
	// The base job passes both paths: every refusal above is its field's.
	for path, a := range submitBoth(t, h, "alice", auth.RoleUser, inputJob()) {
		if a.code != "OK" {
			t.Errorf("the base job over %s: %s %q", path, a.code, a.msg)
		}
	}
}
