package jobspec

import (
	"fmt"
	"math/bits"
	"strconv"
	"strings"
)

// GPU binding kinds (--gpu-bind, and --tres-bind=gres/gpu:...).
const (
	GPUBindNone    = "none"     // every task sees every GPU of the step on its node
	GPUBindClosest = "closest"  // the GPUs on the NUMA nodes of the task's CPUs
	GPUBindMap     = "map_gpu"  // one GPU index per local task, cycling
	GPUBindMask    = "mask_gpu" // one hexadecimal GPU mask per local task, cycling
	GPUBindPerTask = "per_task" // N GPUs per task, in order
	GPUBindSingle  = "single"   // blocks of N tasks share one GPU
)

// maxBindGPUs bounds the GPU indexes a binding may name: a mask is 64 bits.
const maxBindGPUs = 64

// GPUBind is a parsed --gpu-bind. Indexes (and mask bits) count the step's
// GPUs on the node from 0, as the job sees them (Parity always confines
// devices, as Slurm does with ConstrainDevices=yes).
type GPUBind struct {
	Kind    string
	Verbose bool
	// N is per_task's GPUs per task or single's tasks per GPU.
	N int
	// Masks holds one GPU set per local task, cycling (map_gpu: one bit each).
	Masks []uint64
}

// ParseGPUBind reads [verbose,]type with Slurm's spellings: closest, none,
// map_gpu:<list> (or map:), mask_gpu:<list> (or mask:), per_task:<n>,
// single:<n>. A map list entry may repeat as index*count.
func ParseGPUBind(s string) (GPUBind, error) {
	var b GPUBind
	rest := strings.TrimSpace(s)
	if v, ok := strings.CutPrefix(rest, "verbose,"); ok {
		b.Verbose, rest = true, v
	}
	kind, arg, hasArg := strings.Cut(rest, ":")
	switch kind {
	case "map":
		kind = GPUBindMap
	case "mask":
		kind = GPUBindMask
	}
	b.Kind = kind
	bad := func(why string) (GPUBind, error) {
		return GPUBind{}, fmt.Errorf("%w: --gpu-bind=%q: %s", ErrInvalid, s, why)
	}
	switch kind {
	case GPUBindNone, GPUBindClosest:
		if hasArg {
			return bad(kind + " takes no list")
		}
		return b, nil
	case GPUBindPerTask, GPUBindSingle:
		n, err := strconv.Atoi(arg)
		if err != nil || n < 1 {
			return bad(kind + " wants a count of at least 1 (" + kind + ":<n>)")
		}
		b.N = n
		return b, nil
	case GPUBindMap, GPUBindMask:
		if !hasArg || arg == "" {
			return bad(kind + " wants a list (" + kind + ":<list>)")
		}
		masks, err := parseBindList(kind, arg)
		if err != nil {
			return bad(err.Error())
		}
		b.Masks = masks
		return b, nil
	case "":
		return bad("no binding type given")
	}
	return bad("unknown binding type " + strconv.Quote(kind) + " (want closest, map_gpu, mask_gpu, none, per_task or single)")
}

func parseBindList(kind, list string) ([]uint64, error) {
	var out []uint64
	for _, item := range strings.Split(list, ",") {
		v, count := item, 1
		if kind == GPUBindMap {
			if x, c, ok := strings.Cut(item, "*"); ok {
				n, err := strconv.Atoi(c)
				if err != nil || n < 1 || n > 4096 {
					return nil, fmt.Errorf("entry %q: the repeat count is not a number from 1 to 4096", item)
				}
				v, count = x, n
			}
		}
		m, err := bindEntry(kind, v)
		if err != nil {
			return nil, fmt.Errorf("entry %q: %w", item, err)
		}
		for range count {
			out = append(out, m)
		}
	}
	return out, nil
}

func bindEntry(kind, v string) (uint64, error) {
	if kind == GPUBindMap {
		i, err := strconv.ParseUint(v, 10, 8)
		if err != nil || i >= maxBindGPUs {
			return 0, fmt.Errorf("not a GPU index from 0 to %d", maxBindGPUs-1)
		}
		return 1 << i, nil
	}
	m, err := strconv.ParseUint(strings.TrimPrefix(strings.TrimPrefix(v, "0x"), "0X"), 16, 64)
	if err != nil || m == 0 {
		return 0, fmt.Errorf("not a non-zero hexadecimal GPU mask")
	}
	return m, nil
}

// TaskGPUs returns the positions (into the step's GPUs on the node, 0..n-1)
// that local task `task` of `tasks` may use. near reports whether a GPU
// position is local to the task's CPUs, for closest. An error says why the
// binding cannot be honoured.
func (b GPUBind) TaskGPUs(n, task, tasks int, near func(int) bool) ([]int, error) {
	all := make([]int, n)
	for i := range all {
		all[i] = i
	}
	switch b.Kind {
	case "", GPUBindNone:
		return all, nil
	case GPUBindPerTask:
		if (task+1)*b.N > n {
			return nil, fmt.Errorf("per_task:%d for %d tasks needs %d GPUs, the step has %d", b.N, tasks, tasks*b.N, n)
		}
		return all[task*b.N : (task+1)*b.N], nil
	case GPUBindSingle:
		g := task / b.N
		if g >= n {
			return nil, fmt.Errorf("single:%d for %d tasks needs %d GPUs, the step has %d", b.N, tasks, (tasks+b.N-1)/b.N, n)
		}
		return all[g : g+1], nil
	case GPUBindMap, GPUBindMask:
		m := b.Masks[task%len(b.Masks)]
		if hi := 64 - bits.LeadingZeros64(m); hi > n {
			return nil, fmt.Errorf("%s names GPU %d for task %d, the step has GPUs 0 to %d", b.Kind, hi-1, task, n-1)
		}
		var out []int
		for i := range n {
			if m&(1<<uint(i)) != 0 {
				out = append(out, i)
			}
		}
		return out, nil
	case GPUBindClosest:
		var out []int
		for i := range n {
			if near(i) {
				out = append(out, i)
			}
		}
		if len(out) == 0 { // no affinity known: every GPU is as close
			return all, nil
		}
		return out, nil
	}
	return nil, fmt.Errorf("unknown GPU binding %q", b.Kind)
}

func applyGPUBind(b *builder, s setting) error {
	if _, err := ParseGPUBind(s.value); err != nil {
		return reason(strings.TrimPrefix(err.Error(), ErrInvalid.Error()+": "))
	}
	b.req.GPU.GPUBind = strings.TrimSpace(s.value)
	return nil
}
