package format

import (
	"bytes"
	"strings"
	"testing"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
)

func TestEscape(t *testing.T) {
	for in, want := range map[string]string{
		"train-llm": "train-llm", "déjà vu ✓": "déjà vu ✓", "\ufffd": "\ufffd",
		"a\nb": `a\nb`, "a\tb\r": `a\tb\r`, "nul\x00": `nul\x00`, "esc\x1b[2J": `esc\x1b[2J`,
		"del\x7f": `del\x7f`, "c1\u0085": `c1\u0085`, "bad\xffutf8": `bad\xffutf8`,
	} {
		if got := Escape(in); got != want {
			t.Errorf("Escape(%q) = %q, want %q", in, got, want)
		}
	}
}

// forged is a job stored before the controller refused control
// characters: its name and comment would print lines of their own.
func forged() *pb.Job {
	return &pb.Job{Id: 66, User: "mallory", State: "PENDING", Partition: "gpu", Account: "physics", Qos: "normal",
		Spec: &pb.JobSpec{Name: "x\nJobState=COMPLETED UserId=root(0)", Comment: "c\r\n   JobId=1", Workdir: "/w\x1b[2J"}}
}

// TestOutputEscapesStoredControlCharacters: scontrol show job (both
// layouts) and squeue print a stored newline, carriage return or escape
// as text, so no line of theirs is forged.
func TestOutputEscapesStoredControlCharacters(t *testing.T) {
	var show, oneLine, queue bytes.Buffer
	if err := ShowJobs(&show, []*pb.Job{forged()}, ShowOptions{Env: env}); err != nil {
		t.Fatal(err)
	}
	if err := ShowJobs(&oneLine, []*pb.Job{forged()}, ShowOptions{Env: env, OneLiner: true}); err != nil {
		t.Fatal(err)
	}
	l, err := ParseSqueueFormat("%.18i %j %k %Z")
	if err != nil {
		t.Fatal(err)
	}
	if err := Squeue(&queue, []*pb.Job{forged()}, l, SqueueOptions{Env: env}); err != nil {
		t.Fatal(err)
	}
	for name, out := range map[string]string{"scontrol": show.String(), "scontrol -o": oneLine.String(), "squeue": queue.String()} {
		if strings.ContainsAny(out, "\r\x1b") {
			t.Errorf("%s printed a raw control character:\n%q", name, out)
		}
		for _, line := range strings.Split(out, "\n") {
			if strings.HasPrefix(strings.TrimSpace(line), "JobState=COMPLETED UserId=root") || strings.HasPrefix(strings.TrimSpace(line), "JobId=1") {
				t.Errorf("%s printed a forged line %q", name, line)
			}
		}
		if !strings.Contains(out, `x\nJobState=COMPLETED UserId=root(0)`) {
			t.Errorf("%s does not show the stored name escaped:\n%s", name, out)
		}
	}
	if n := strings.Count(oneLine.String(), "\n"); n != 1 {
		t.Errorf("scontrol -o printed %d lines for one job:\n%s", n, oneLine.String())
	}
	if !strings.Contains(show.String(), `Comment=c\r\n   JobId=1`) || !strings.Contains(show.String(), `WorkDir=/w\x1b[2J`) {
		t.Errorf("scontrol: comment or working directory not escaped:\n%s", show.String())
	}
}
