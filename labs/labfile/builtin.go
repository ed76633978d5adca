package labfile

import (
	"fmt"
	"sort"
	"strings"
)

// builtinLabs are the labs shipped with Parity, as lab-file text so they
// read exactly like a user's own lab file.
func builtinLabs() map[string]string {
	return map[string]string{
		"default": `name: default
seed: 1
nodes:
  - names: h100-[1-2]
    template: dgx-h100
    features: [h100, nvlink]
  - names: mi300x-[1-2]
    template: mi300x
    features: [mi300x, xgmi]
  # Partitioned nodes, named to sort between their vendor's whole-GPU
  # nodes: specs that need a node take the first or the last of them.
  - names: h100-1-mig
    template: dgx-h100-mig-all
    features: [h100, mig]
  - names: mi300x-1-cpx
    template: mi300x-cpx
    features: [mi300x, cpx]
  - names: cpu-[1-2]
    template: cpu
    features: [cpu]
partitions:
  - name: gpu
    nodes: h100-[1-2],mi300x-[1-2],h100-1-mig,mi300x-1-cpx
    default: true
    maxTime: 1-00:00:00
    billingWeights: CPU=1,Mem=0.25G,GRES/gpu=8
  - name: cpu
    nodes: cpu-[1-2]
    billingWeights: CPU=1,Mem=0.25G
switches:
  - name: spine
    switches: leaf[1-2]
  - name: leaf1
    nodes: h100-[1-2],h100-1-mig,cpu-1
  - name: leaf2
    nodes: mi300x-[1-2],mi300x-1-cpx,cpu-2
`,
		// four-vendors is default with a fourth family beside NVIDIA, AMD
		// and CPU-only: two HLS-2 nodes of Intel Gaudi 2 cards served by
		// the out-of-tree adapter cmd/gaudi-driver, one process per node,
		// attached over its socket from the node's config file as a site
		// attaches it.
		"four-vendors": `name: four-vendors
seed: 1
nodes:
  - names: h100-[1-2]
    template: dgx-h100
    features: [h100, nvlink]
  - names: mi300x-[1-2]
    template: mi300x
    features: [mi300x, xgmi]
  - names: h100-1-mig
    template: dgx-h100-mig-all
    features: [h100, mig]
  - names: mi300x-1-cpx
    template: mi300x-cpx
    features: [mi300x, cpx]
  - names: gaudi2-[1-2]
    template: hls2-gaudi2
    features: [gaudi2, roce]
  - names: cpu-[1-2]
    template: cpu
    features: [cpu]
partitions:
  - name: gpu
    nodes: h100-[1-2],mi300x-[1-2],h100-1-mig,mi300x-1-cpx,gaudi2-[1-2]
    default: true
    maxTime: 1-00:00:00
    billingWeights: CPU=1,Mem=0.25G,GRES/gpu=8
  - name: cpu
    nodes: cpu-[1-2]
    billingWeights: CPU=1,Mem=0.25G
switches:
  - name: spine
    switches: leaf[1-3]
  - name: leaf1
    nodes: h100-[1-2],h100-1-mig,cpu-1
  - name: leaf2
    nodes: mi300x-[1-2],mi300x-1-cpx,cpu-2
  - name: leaf3
    nodes: gaudi2-[1-2]
`,
		// slurm-anchor matches the side-by-side Slurm setup: 4 nodes × 8 H100.
		"slurm-anchor": `name: slurm-anchor
seed: 1
nodes:
  - names: gpu[1-4]
    template: dgx-h100
    features: [h100]
partitions:
  - name: gpu
    nodes: gpu[1-4]
    default: true
`,
		"bench-32": `name: bench-32
seed: 1
nodes:
  - names: h100-[01-16]
    template: dgx-h100
    features: [h100]
  - names: mi300x-[01-16]
    template: mi300x
    features: [mi300x]
partitions:
  - name: gpu
    nodes: h100-[01-16],mi300x-[01-16]
    default: true
switches:
  - name: spine
    switches: leaf[1-4]
  - name: leaf1
    nodes: h100-[01-08]
  - name: leaf2
    nodes: h100-[09-16]
  - name: leaf3
    nodes: mi300x-[01-08]
  - name: leaf4
    nodes: mi300x-[09-16]
`,
	}
}

// BuiltinNames lists the built-in labs, sorted.
func BuiltinNames() []string {
	var out []string
	for n := range builtinLabs() {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Builtin returns a built-in lab by name.
func Builtin(name string) (*Lab, error) {
	text, ok := builtinLabs()[name]
	if !ok {
		return nil, fmt.Errorf("%w: no built-in lab %q (built-in: %s; or give a lab file path)", ErrInvalid, name, strings.Join(BuiltinNames(), ", "))
	}
	return Parse("builtin:"+name, []byte(text))
}

// Resolve returns a built-in lab when name is one, else loads name as a file.
func Resolve(name string) (*Lab, error) {
	if _, ok := builtinLabs()[name]; ok {
		return Builtin(name)
	}
	if strings.ContainsAny(name, "/.") {
		return Load(name)
	}
	return Builtin(name)
}
