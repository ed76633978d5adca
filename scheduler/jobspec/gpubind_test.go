package jobspec

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestParseGPUBind(t *testing.T) {
	tests := []struct {
		in      string
		kind    string
		verbose bool
		n       int
		masks   []uint64
		err     string
	}{
		{in: "closest", kind: GPUBindClosest},
		{in: "none", kind: GPUBindNone},
		{in: "verbose,closest", kind: GPUBindClosest, verbose: true},
		{in: "map_gpu:1,0", kind: GPUBindMap, masks: []uint64{2, 1}},
		{in: "map:0*2,1", kind: GPUBindMap, masks: []uint64{1, 1, 2}},
		{in: "mask_gpu:0x3,0xc", kind: GPUBindMask, masks: []uint64{3, 12}},
		{in: "mask:f", kind: GPUBindMask, masks: []uint64{15}},
		{in: "per_task:2", kind: GPUBindPerTask, n: 2},
		{in: "single:4", kind: GPUBindSingle, n: 4},
		{in: "", err: "no binding type"},
		{in: "nearest", err: `unknown binding type "nearest"`},
		{in: "closest:1", err: "takes no list"},
		{in: "per_task:0", err: "at least 1"},
		{in: "single:x", err: "at least 1"},
		{in: "map_gpu:", err: "wants a list"},
		{in: "map_gpu:64", err: `entry "64": not a GPU index from 0 to 63`},
		{in: "map_gpu:1*0", err: "repeat count"},
		{in: "mask_gpu:0", err: "non-zero hexadecimal"},
		{in: "mask_gpu:zz", err: "non-zero hexadecimal"},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			b, err := ParseGPUBind(tc.in)
			if tc.err != "" {
				if err == nil || !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.err) || !strings.Contains(err.Error(), "--gpu-bind=") {
					t.Fatalf("ParseGPUBind(%q) = %+v, %v; want an ErrInvalid naming --gpu-bind and %q", tc.in, b, err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if b.Kind != tc.kind || b.Verbose != tc.verbose || b.N != tc.n || !slices.Equal(b.Masks, tc.masks) {
				t.Errorf("ParseGPUBind(%q) = %+v, want kind %s verbose %v n %d masks %v", tc.in, b, tc.kind, tc.verbose, tc.n, tc.masks)
			}
		})
	}
}

func TestGPUBindTaskGPUs(t *testing.T) {
	near := func(pos int) bool { return pos >= 2 } // GPUs 2 and 3 are local to the task's CPUs
	tests := []struct {
		bind       string
		gpus, task int
		tasks      int
		want       []int
		err        string
	}{
		{bind: "none", gpus: 4, task: 1, tasks: 4, want: []int{0, 1, 2, 3}},
		{bind: "per_task:2", gpus: 4, task: 1, tasks: 2, want: []int{2, 3}},
		{bind: "per_task:2", gpus: 4, task: 2, tasks: 3, err: "needs 6 GPUs, the step has 4"},
		{bind: "single:2", gpus: 2, task: 0, tasks: 4, want: []int{0}},
		{bind: "single:2", gpus: 2, task: 3, tasks: 4, want: []int{1}},
		{bind: "single:2", gpus: 2, task: 4, tasks: 5, err: "needs 3 GPUs"},
		{bind: "map_gpu:1,0", gpus: 2, task: 0, tasks: 2, want: []int{1}},
		{bind: "map_gpu:1,0", gpus: 2, task: 3, tasks: 4, want: []int{0}}, // the list cycles
		{bind: "map_gpu:3", gpus: 2, task: 0, tasks: 1, err: "names GPU 3 for task 0, the step has GPUs 0 to 1"},
		{bind: "mask_gpu:0x5", gpus: 4, task: 0, tasks: 1, want: []int{0, 2}},
		{bind: "closest", gpus: 4, task: 0, tasks: 2, want: []int{2, 3}},
	}
	for _, tc := range tests {
		b, err := ParseGPUBind(tc.bind)
		if err != nil {
			t.Fatal(err)
		}
		got, err := b.TaskGPUs(tc.gpus, tc.task, tc.tasks, near)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s task %d of %d on %d GPUs: %v, %v; want an error containing %q", tc.bind, tc.task, tc.tasks, tc.gpus, got, err, tc.err)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("%s task %d of %d on %d GPUs: %v, %v; want %v", tc.bind, tc.task, tc.tasks, tc.gpus, got, err, tc.want)
		}
	}
	b, _ := ParseGPUBind("closest")
	if got, _ := b.TaskGPUs(3, 0, 1, func(int) bool { return false }); !slices.Equal(got, []int{0, 1, 2}) {
		t.Errorf("closest with no GPU local to the task: %v, want every GPU (all equally far)", got)
	}
}

func FuzzParseGPUBind(f *testing.F) {
	for _, s := range []string{"closest", "verbose,map_gpu:0*3,1", "mask_gpu:0xff,0x1", "single:2", "per_task:1", "map:", "mask:0"} {
		f.Add(s, 3, 1, 4)
	}
	f.Fuzz(func(t *testing.T, s string, gpus, task, tasks int) {
		b, err := ParseGPUBind(s)
		if err != nil {
			return
		}
		gpus, tasks = gpus%65, max(tasks%1024, 1)
		if gpus < 0 || task < 0 {
			return
		}
		task %= tasks
		got, err := b.TaskGPUs(gpus, task, tasks, func(p int) bool { return p%2 == 0 })
		if err != nil {
			return
		}
		for _, p := range got {
			if p < 0 || p >= gpus {
				t.Fatalf("%q: task %d of %d on %d GPUs got position %d", s, task, tasks, gpus, p)
			}
		}
	})
}

// --gpu-bind (and #SBATCH --gpu-bind, SBATCH_GPU_BIND) is kept as written
// for the job's steps and exported as SLURM_GPU_BIND; a value no step
// could honour is refused at submit, naming the option.
func TestGPUBindOption(t *testing.T) {
	script := []byte("#!/bin/sh\n#SBATCH --gpu-bind=single:2\nsrun hostname\n")
	req, err := Parse(script, nil, map[string]string{}, testOpts())
	if err != nil {
		t.Fatal(err)
	}
	if req.GPU.GPUBind != "single:2" || req.Env["SLURM_GPU_BIND"] != "single:2" {
		t.Errorf("#SBATCH --gpu-bind=single:2: GPUBind %q, SLURM_GPU_BIND %q", req.GPU.GPUBind, req.Env["SLURM_GPU_BIND"])
	}
	req, err = Parse(script, []string{"--gpu-bind=map_gpu:1,0"}, map[string]string{}, testOpts())
	if err != nil || req.GPU.GPUBind != "map_gpu:1,0" {
		t.Errorf("the command line over the script: %v, %v", req.GPU.GPUBind, err)
	}
	_, err = Parse([]byte("#!/bin/sh\nhostname\n"), []string{"--gpu-bind=nearest"}, nil, testOpts())
	if err == nil || !strings.Contains(err.Error(), "--gpu-bind") || !strings.Contains(err.Error(), "nearest") {
		t.Errorf("--gpu-bind=nearest: %v; want a refusal naming the option and value", err)
	}
}
