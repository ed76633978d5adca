package agent

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func TestControllerLaunchesThroughTheAgent(t *testing.T) {
	c := startCluster(t)
	spec := gpuSpec(t, `echo "job=$SLURM_JOB_ID gpus=$SLURM_JOB_GPUS on=$SLURM_GPUS_ON_NODE cuda=$CUDA_VISIBLE_DEVICES nodes=$SLURM_JOB_NODELIST mem=$SLURM_MEM_PER_NODE"
for f in "$D"/nvidia*; do
	if err=$( (exec 3<"$f") 2>&1 ); then echo "$f=opened"; else echo "$f=${err##*: }"; fi
done
exit 3
`, 2)
	spec.Workdir, spec.Output = c.work, "out-%j.txt"
	spec.Env["D"] = c.devDir
	id := c.submit(spec)
	j := c.waitEnd(id)
	if j.GetState() != "FAILED" || j.GetExitCode() != 3 || j.GetExitSignal() != 0 {
		t.Fatalf("job %d ended %s %d:%d (%s)", id, j.GetState(), j.GetExitCode(), j.GetExitSignal(), j.GetReason())
	}
	out, err := os.ReadFile(filepath.Join(c.work, fmt.Sprintf("out-%d.txt", id)))
	if err != nil {
		t.Fatal(err)
	}
	text := string(out)
	held := j.GetAlloc()[0].GetDevices()
	want := fmt.Sprintf("job=%d gpus=", id)
	if !strings.Contains(text, want) || !strings.Contains(text, "on=2 cuda=0,1 nodes=n1 mem=256") {
		t.Errorf("job environment:\n%s", text)
	}
	idx := map[string]int{}
	for i, u := range c.gpus {
		idx[u] = i
	}
	allowed := map[int]bool{}
	for _, u := range held {
		allowed[idx[u]] = true
	}
	if c.rtCfg.Cgroups == nil {
		t.Log("device isolation not checked: this host has no usable cgroups")
	} else {
		for i := range 8 {
			line := fmt.Sprintf("%s/nvidia%d=", c.devDir, i)
			want := line + "Operation not permitted"
			if allowed[i] {
				want = line + "No such device or address"
			}
			if !strings.Contains(text, want+"\n") {
				t.Errorf("GPU %d (held: %v): want %q in\n%s", i, allowed[i], want, text)
			}
		}
	}
	c.waitSettled()
}

func TestCancelThroughTheController(t *testing.T) {
	c := startCluster(t)
	ready := filepath.Join(c.work, "ready")
	if err := unix.Mkfifo(ready, 0o666); err != nil {
		t.Fatal(err)
	}
	os.Chmod(ready, 0o666)
	spec := gpuSpec(t, `echo ready > "$W/ready"; while :; do sleep 1000 & wait $!; done`, 1)
	spec.Workdir, spec.Env["W"] = c.work, c.work
	id := c.submit(spec)
	got := make(chan string, 1)
	go func() { b, _ := os.ReadFile(ready); got <- string(b) }()
	select {
	case <-got:
	case <-time.After(waitTimeout):
		t.Fatal("job never started")
	}
	if _, err := c.user().CancelJob(context.Background(), id); err != nil {
		t.Fatal(err)
	}
	j := c.waitEnd(id)
	if j.GetState() != "CANCELLED" {
		t.Errorf("cancelled job ended %s (%s)", j.GetState(), j.GetReason())
	}
	c.waitSettled()
}

func TestAgentRestartKeepsJobsAndTheirExitCodes(t *testing.T) {
	c := startCluster(t)
	ready, release := filepath.Join(c.work, "ready"), filepath.Join(c.work, "go")
	for _, f := range []string{ready, release} {
		if err := unix.Mkfifo(f, 0o666); err != nil {
			t.Fatal(err)
		}
		os.Chmod(f, 0o666)
	}
	spec := gpuSpec(t, `echo ready > "$W/ready"; read word < "$W/go"; exit $word`, 1)
	spec.Workdir, spec.Env["W"] = c.work, c.work
	readLine := func() {
		got := make(chan struct{})
		go func() { os.ReadFile(ready); close(got) }()
		select {
		case <-got:
		case <-time.After(waitTimeout):
			t.Fatal("job never said ready")
		}
	}
	id := c.submit(spec)
	readLine()
	c.stopAgent()
	c.startAgent()
	os.WriteFile(release, []byte("7\n"), 0)
	if j := c.waitEnd(id); j.GetState() != "FAILED" || j.GetExitCode() != 7 {
		t.Errorf("job across an agent restart ended %s %d:%d (%s), want FAILED 7:0", j.GetState(), j.GetExitCode(), j.GetExitSignal(), j.GetReason())
	}
	c.waitSettled()

	id = c.submit(spec)
	readLine()
	c.stopAgent()
	os.WriteFile(release, []byte("9\n"), 0) // ends while no agent runs
	c.jobStatusWritten(id)
	c.startAgent()
	if j := c.waitEnd(id); j.GetState() != "FAILED" || j.GetExitCode() != 9 {
		t.Errorf("job that ended while the agent was down: %s %d:%d (%s), want FAILED 9:0", j.GetState(), j.GetExitCode(), j.GetExitSignal(), j.GetReason())
	}
	c.waitSettled()
}
