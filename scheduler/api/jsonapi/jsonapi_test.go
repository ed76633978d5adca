package jsonapi

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/parityhpc/parity/scheduler/jobspec"
)

func TestFromRequest(t *testing.T) {
	script := "#!/bin/bash\n#SBATCH -J train\n#SBATCH -p gpu,debug\n#SBATCH --gpus-per-node=h100:4\n#SBATCH --mem-per-gpu=8G\n" +
		"#SBATCH -t UNLIMITED\n#SBATCH --begin=2026-12-01T10:00:00\n#SBATCH --requeue=expedite\n#SBATCH --gres-flags=one-parent\nsrun x\n"
	req, err := jobspec.Parse([]byte(script), []string{"--exclusive", "job.sh", "a1"}, map[string]string{"HOME": "/h"},
		jobspec.ParseOptions{Now: time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC), Location: time.UTC, User: "alice", SubmitDir: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	s := FromRequest(req)
	checks := []struct {
		what      string
		got, want any
	}{
		{"name", s.Name, "train"},
		{"first partition", s.Partition, "gpu"},
		{"partition list", strings.Join(s.Partitions, ","), "gpu,debug"},
		{"gres type", s.GRES.PerNode[0].Type, "h100"},
		{"gres count", s.GRES.PerNode[0].Count, int64(4)},
		{"mem per gpu", s.MemPerGPUMB, int64(8192)},
		{"unlimited", s.TimeLimitSeconds, int64(-1)},
		{"begin", s.Begin.UTC().Format(time.RFC3339), "2026-12-01T10:00:00Z"},
		{"exclusive", s.Exclusive, true},
		{"requeue", s.Requeue, true},
		{"expedited requeue", s.RequeueExpedite, true},
		{"gres flags", s.GRESFlags, "one-parent"},
		{"argv", strings.Join(s.Argv, " "), "a1"},
		{"script", s.Script, script},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.what, c.got, c.want)
		}
	}
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), `"deadline"`) || strings.Contains(string(b), `"nice"`) {
		t.Errorf("zero fields are sent: %s", b)
	}
}

// TestLeanImports keeps this package (and so the lean sbatch) free of
// gRPC and protobuf, whose initialisation every submitting process pays.
func TestLeanImports(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go toolchain to list imports with")
	}
	out, err := exec.Command(goBin, "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, pkg := range strings.Fields(string(out)) {
		if strings.HasPrefix(pkg, "google.golang.org/") || strings.HasPrefix(pkg, "golang.org/x/net") ||
			strings.Contains(pkg, "/scheduler/api/parityv1") {
			t.Errorf("jsonapi links %s", pkg)
		}
	}
}
