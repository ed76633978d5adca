package chaos

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"net/http"
	"strings"
	"syscall"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/parityhpc/parity/scheduler/api/jsonapi"
	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/auth"
	"github.com/parityhpc/parity/scheduler/client"
)

// badInput is one submission no cluster should take.
type badInput struct {
	what string
	// fields: the refusal must name one of them (compared without case,
	// dashes or underscores); none means any clean refusal will do.
	fields []string
	// change makes the bad spec from a valid held job; raw is an HTTP body
	// instead (no gRPC form: a body that is not a valid message).
	change func(*pb.JobSpec)
	raw    string
}

// spec is the bad spec (nil for a raw body).
func (b badInput) spec(name string) *pb.JobSpec {
	if b.change == nil {
		return nil
	}
	s := heldSpec(name)
	b.change(s)
	return s
}

func badInputs() []badInput {
	set := func(f func(*pb.JobSpec)) func(*pb.JobSpec) { return f }
	gpus := func(n int64) *pb.GRESRequest {
		return &pb.GRESRequest{PerNode: []*pb.GRESTerm{{Name: "gpu", Count: n}}}
	}
	return []badInput{
		{what: "empty script", fields: []string{"script"}, change: set(func(s *pb.JobSpec) { s.Script = "" })},
		{what: "blank script", fields: []string{"script"}, change: set(func(s *pb.JobSpec) { s.Script = " \n\t\n" })},
		{what: "script without #!", fields: []string{"script"}, change: set(func(s *pb.JobSpec) { s.Script = "echo hi\n" })},
		{what: "script with NUL", fields: []string{"script"}, change: set(func(s *pb.JobSpec) { s.Script = "#!/bin/sh\necho \x00hi\n" })},
		{what: "negative memory per node", fields: []string{"mem"}, change: set(func(s *pb.JobSpec) { s.MemPerNodeMb = -5 })},
		{what: "negative memory per CPU", fields: []string{"mempercpu"}, change: set(func(s *pb.JobSpec) { s.MemPerCpuMb = -1 })},
		{what: "2^62 MB per CPU × 4 CPUs", fields: []string{"mempercpu"}, change: set(func(s *pb.JobSpec) { s.MemPerCpuMb, s.CpusPerTask = 1<<62, 4 })},
		{what: "MaxInt64 MB per CPU × 2 tasks", fields: []string{"mempercpu"}, change: set(func(s *pb.JobSpec) { s.MemPerCpuMb, s.Ntasks = math.MaxInt64, 2 })},
		{what: "MaxInt64 MB per node", fields: []string{"mem"}, change: set(func(s *pb.JobSpec) { s.MemPerNodeMb = math.MaxInt64 })},
		{what: "2^62 MB per GPU × 2 GPUs", fields: []string{"mempergpu"}, change: set(func(s *pb.JobSpec) { s.MemPerGpuMb, s.Gres, s.Partition = 1<<62, gpus(2), "gpu" })},
		{what: "name with a newline", fields: []string{"name"}, change: set(func(s *pb.JobSpec) { s.Name = "x\nJobState=COMPLETED UserId=root(0)" })},
		{what: "name with NUL", fields: []string{"name"}, change: set(func(s *pb.JobSpec) { s.Name = "x\x00y" })},
		{what: "name of 5000 bytes", fields: []string{"name"}, change: set(func(s *pb.JobSpec) { s.Name = strings.Repeat("n", 5000) })},
		{what: "comment with an escape sequence", fields: []string{"comment"}, change: set(func(s *pb.JobSpec) { s.Comment = "\x1b[2Jgone" })},
		{what: "account with a newline", fields: []string{"account"}, change: set(func(s *pb.JobSpec) { s.Account = "lab\nroot" })},
		{what: "output path with a newline", fields: []string{"output"}, change: set(func(s *pb.JobSpec) { s.Output = "/tmp/x\ny" })},
		{what: "workdir with a carriage return", fields: []string{"chdir", "workdir"}, change: set(func(s *pb.JobSpec) { s.Workdir = "/tmp\rX" })},
		{what: "array 0-1000000", fields: []string{"array"}, change: set(func(s *pb.JobSpec) { s.Array = "0-1000000" })},
		{what: "array 0-4000000", fields: []string{"array"}, change: set(func(s *pb.JobSpec) { s.Array = "0-4000000" })},
		{what: "array step 0", fields: []string{"array"}, change: set(func(s *pb.JobSpec) { s.Array = "0-10:0" })},
		{what: "maxNodes -1", fields: []string{"maxnodes"}, change: set(func(s *pb.JobSpec) { s.MaxNodes = -1 })},
		{what: "nodes -1", fields: []string{"nodes"}, change: set(func(s *pb.JobSpec) { s.Nodes = -1 })},
		{what: "ntasks -4", fields: []string{"ntasks"}, change: set(func(s *pb.JobSpec) { s.Ntasks = -4 })},
		{what: "MaxInt32 CPUs per task × 2 tasks per node", fields: []string{"cpuspertask"}, change: set(func(s *pb.JobSpec) { s.CpusPerTask, s.NtasksPerNode = math.MaxInt32, 2 })},
		{what: "CPUs per GPU -1", fields: []string{"cpuspergpu"}, change: set(func(s *pb.JobSpec) { s.CpusPerGpu = -1 })},
		{what: "switches -1", fields: []string{"switches"}, change: set(func(s *pb.JobSpec) { s.Switches = -1 })},
		{what: "time limit -5 s", fields: []string{"time"}, change: set(func(s *pb.JobSpec) { s.TimeLimitSeconds = -5 })},
		{what: "time limit MaxInt64 s", fields: []string{"time"}, change: set(func(s *pb.JobSpec) { s.TimeLimitSeconds = math.MaxInt64 })},
		{what: "minimum time -60 s", fields: []string{"timemin"}, change: set(func(s *pb.JobSpec) { s.TimeMinSeconds = -60 })},
		{what: "nice -1000 as a plain user", fields: []string{"nice"}, change: set(func(s *pb.JobSpec) { s.Nice = -1000 })},
		{what: "nice MaxInt32", fields: []string{"nice"}, change: set(func(s *pb.JobSpec) { s.Nice = math.MaxInt32 })},
		{what: "GPU count -1", fields: []string{"gres"}, change: set(func(s *pb.JobSpec) { s.Gres, s.Partition = gpus(-1), "gpu" })},
		{what: "GPU count 2^62", fields: []string{"gres"}, change: set(func(s *pb.JobSpec) { s.Gres, s.Partition = gpus(1<<62), "gpu" })},
		{what: "dependency afterok:abc", fields: []string{"dependency"}, change: set(func(s *pb.JobSpec) { s.Dependency = "afterok:abc" })},
		{what: "begin time past year 9999", fields: []string{"begin"}, change: set(func(s *pb.JobSpec) { s.Begin = &timestamppb.Timestamp{Seconds: math.MaxInt64} })},
		{what: "unknown partition", fields: []string{"partition"}, change: set(func(s *pb.JobSpec) { s.Partition = "nope" })},
		{what: `HTTP "nice": -1 as a plain user`, fields: []string{"nice"}, raw: `{"spec":{"script":"#!/bin/sh\ntrue\n","hold":true,"partition":"cpu","nice":-1}}`},
		{what: "HTTP unknown field", fields: []string{"bogusField"}, raw: `{"spec":{"script":"#!/bin/sh\ntrue\n","bogusField":1}}`},
		{what: "HTTP nice as a string", fields: []string{"nice"}, raw: `{"spec":{"script":"#!/bin/sh\ntrue\n","nice":"abc"}}`},
		{what: "HTTP memory past int64", fields: []string{"mempercpu"}, raw: `{"spec":{"script":"#!/bin/sh\ntrue\n","memPerCpuMb":"99999999999999999999"}}`},
		{what: "HTTP name not UTF-8", raw: "{\"spec\":{\"script\":\"#!/bin/sh\\ntrue\\n\",\"name\":\"\xff\xfe\"}}"},
		{what: "HTTP truncated body", raw: `{"spec":{"script":`},
		{what: "HTTP begin time in year 10000", fields: []string{"begin"}, raw: `{"spec":{"script":"#!/bin/sh\ntrue\n","begin":"10000-01-01T00:00:00Z"}}`},
	}
}

// runInput submits every bad input over gRPC and (as JSON) over HTTP as
// a plain user: each must be refused with a message naming the field,
// and the controller must still answer afterwards.
func runInput(ctx context.Context, l *lab, o *Options) []Row {
	row := Row{Scenario: "bad input (gRPC, HTTP)"}
	tok := l.token(userAlice, auth.RoleUser)
	cl, err := client.Dial(ctx, l.p.Addr, tok)
	if err != nil {
		row.fail("%v", err)
		return []Row{row}
	}
	defer cl.Close()
	right, accepted, crashes := 0, 0, 0
	for i, b := range badInputs() {
		for _, p := range []path{viaGRPC, viaHTTP} {
			if p == viaGRPC && b.change == nil || p == viaHTTP && b.change != nil && submitBody(b.spec("x")) == nil {
				continue // no such message on this path
			}
			row.Cases++
			code, msg, id, err := submitBad(ctx, cl, l, tok, b, p, fmt.Sprintf("chaos-bad-%d", i))
			if err != nil {
				row.fail("%s over %s: could not run: %v", b.what, p, err)
				continue
			}
			if !l.ctl.alive() {
				crashes++
				row.fail("%s over %s: the controller died (see %s)", b.what, p, l.dir)
				if _, err := l.startController(ctx); err != nil {
					row.fail("restart after the crash: %v", err)
					return []Row{row}
				}
			}
			v, why := judgeRefusal(b, code, msg, id)
			switch {
			case v == Pass:
				right++
			case id != 0:
				accepted++
				_, _ = l.admin.CancelJob(ctx, id)
			}
			if v != Pass {
				row.judge(v, "%s over %s: %s", b.what, p, why)
			}
		}
	}
	if _, err := l.admin.Info(ctx); err != nil || !l.ctl.alive() {
		crashes++
		row.fail("the controller does not answer after the bad inputs: %v", err)
	}
	o.progressf("input: %d of %d refused naming the field, %d crashes", right, row.Cases, crashes)
	row.add("refused correctly", fmt.Sprintf("%d of %d", right, row.Cases))
	row.add("accepted", accepted)
	row.add("crashes", crashes)
	return []Row{row}
}

// submitBad sends one bad input and returns the refusal's code and
// message, or the id it was accepted as.
func submitBad(ctx context.Context, cl *client.Client, l *lab, tok string, b badInput, p path, name string) (codes.Code, string, uint64, error) {
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	spec := b.spec(name)
	if p == viaGRPC {
		id, err := cl.Submit(ctx, spec)
		st := status.Convert(err)
		return st.Code(), st.Message(), id, nil
	}
	body := []byte(b.raw)
	if spec != nil {
		body = submitBody(spec)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+l.p.Addr+jsonapi.SubmitPath, bytes.NewReader(body))
	if err != nil {
		return 0, "", 0, err
	}
	req.Header.Set("Content-Type", jsonapi.ContentType)
	req.Header.Set("Authorization", "Bearer "+tok)
	code, msg, err := postJSON(req)
	if err != nil && isGone(err) {
		return codes.Unavailable, err.Error(), 0, nil
	}
	var id uint64
	if code == codes.OK {
		id = acceptedID(msg)
	}
	return code, msg, id, err
}

// isGone reports a connection the server dropped (it may have crashed).
func isGone(err error) bool {
	return strings.Contains(err.Error(), "EOF") || strings.Contains(err.Error(), syscall.ECONNRESET.Error()) ||
		strings.Contains(err.Error(), syscall.ECONNREFUSED.Error())
}

// acceptedID reads the job id of an accepted HTTP submission ({"jobId":"N",...}).
func acceptedID(body string) uint64 {
	var id uint64
	if i := strings.Index(body, `"jobId":"`); i >= 0 {
		fmt.Sscanf(body[i+len(`"jobId":"`):], "%d", &id)
	}
	return id
}

// judgeRefusal says whether a bad input was refused as it should be: with
// a code that is a refusal (not an internal error or a dropped call) and
// a message naming one of its fields. Accepted or not refused cleanly
// fails; refused without naming the field warns.
func judgeRefusal(b badInput, code codes.Code, msg string, id uint64) (Verdict, string) {
	switch code {
	case codes.OK:
		return Fail, fmt.Sprintf("accepted as job %d", id)
	case codes.Unknown, codes.Internal, codes.Unavailable, codes.DeadlineExceeded, codes.Canceled:
		return Fail, fmt.Sprintf("not refused cleanly: %s: %s", code, msg)
	}
	if len(b.fields) == 0 {
		return Pass, ""
	}
	m := squash(msg)
	for _, f := range b.fields {
		if strings.Contains(m, squash(f)) {
			return Pass, ""
		}
	}
	return Warn, fmt.Sprintf("refused (%s) with %q, which does not name %s", code, msg, strings.Join(b.fields, " or "))
}

// squash lower-cases s and drops what is not a letter or digit, so
// --mem-per-cpu, mem_per_cpu_mb and memPerCpuMb compare alike.
func squash(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		}
	}
	return b.String()
}
