package conformance

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"testing"
	"time"

	"github.com/parityhpc/parity/labs/labfile"
	"github.com/parityhpc/parity/reports"
)

// oneGPUEnv names the file a one-GPU child run writes its report to.
const oneGPUEnv = "PARITY_CONFORMANCE_ONEGPU_REPORT"

// oneGPULab is a cluster of one-GPU virtual machines, the shape of a cloud
// GPU fleet (and of the H200 machine these specs were first run on).
const oneGPULab = `name: one-gpu
seed: 3
nodes:
  - names: vm-[1-2]
    template: gpu-vm
partitions:
  - name: gpu
    nodes: vm-[1-2]
    default: true
`

// oneGPUFocus are the specs that ask for several GPUs a node.
var oneGPUFocus = regexp.MustCompile(`^(placement/(count-and-type|numa-local-cpus)|isolation/(device-files|visible-devices)|accounting/(tres|gpu-seconds)|` +
	`multinode/(gpus-on-node|step-gpus|gpus-per-task-visible|gpus-per-task-own|gpus-per-task-cover)|steps/(devices-subset|gpus-per-node|gpus-held|gpus-overlap)) nvidia `)

// oneGPUMain runs the focused specs on the one-GPU lab in a child process
// (ginkgo runs one suite per process) and writes the report.
func oneGPUMain() int {
	lab, err := labfile.Parse("one-gpu.yaml", []byte(oneGPULab))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	target, err := NewLab(ctx, LabOptions{Lab: lab})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	defer target.Close(context.Background())
	if v := target.Vendors(); len(v) != 1 || v[0].GPUsPerNode != 1 {
		fmt.Fprintf(os.Stderr, "vendors %+v, want nvidia with one GPU a node\n", v)
		return 2
	}
	run, err := Run(ctx, target, Options{Focus: oneGPUFocus, Account: "lab", JobTimeout: time.Minute})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	if err := writeChildRun(oneGPUEnv, run); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	return 0
}

// TestOneGPUNodes runs the specs that want several GPUs on nodes that have
// one: they must ask for what a node has, pass, and still prove that a job
// cannot open a GPU it does not hold.
func TestOneGPUNodes(t *testing.T) {
	t.Parallel() // each starts its own lab, under its own cgroup root
	if testing.Short() {
		t.Skip("starts a lab and runs jobs")
	}
	if os.Geteuid() != 0 {
		t.Skip("job isolation (and so the device-files spec) needs root")
	}
	run, _ := childRun(t, oneGPUEnv)
	ran := 0
	for _, s := range run.Specs {
		if s.Vendor != "nvidia" || !oneGPUFocus.MatchString(s.ID+" nvidia ") {
			continue
		}
		ran++
		if s.Status != reports.StatusPassed {
			t.Errorf("%s: %s: %s", s.ID, s.Status, s.Reason)
		}
	}
	if ran != 15 {
		t.Errorf("%d focused specs reported, want 15", ran)
	}
}
