package conformance

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/parityhpc/parity/gres"
	"github.com/parityhpc/parity/labs/presets"
	"github.com/parityhpc/parity/scheduler/client"
	"github.com/parityhpc/parity/topology"
	"github.com/parityhpc/parity/vendors"
	"github.com/parityhpc/parity/vendors/builtin"
)

// ErrVendorsFile is wrapped by every error about a --vendors file.
var ErrVendorsFile = errors.New("conformance: invalid vendors file")

// VendorsFile says where each vendor's nodes are on a live cluster:
//
//	vendors:
//	  - name: nvidia
//	    partition: gpu
//	    feature: h100          # optional: a --constraint only its nodes carry
//	    gpuType: h100          # optional: the GRES type (default: the nodes' GPUs')
//	    visibleDevicesEnv: [CUDA_VISIBLE_DEVICES]  # optional: default from the in-tree driver
//	  - name: cpu
//	    partition: cpu
type VendorsFile struct {
	Vendors []VendorEntry `yaml:"vendors"`
}

// VendorEntry is one vendor of a VendorsFile.
type VendorEntry struct {
	Name              string   `yaml:"name"`
	Partition         string   `yaml:"partition"`
	Feature           string   `yaml:"feature"`
	GPUType           string   `yaml:"gpuType"`
	VisibleDevicesEnv []string `yaml:"visibleDevicesEnv"`
}

// ParseVendorsFile reads and checks a vendors file; name labels errors.
func ParseVendorsFile(name string, data []byte) (*VendorsFile, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var f VendorsFile
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("%w: %s: %s", ErrVendorsFile, name, strings.TrimPrefix(err.Error(), "yaml: "))
	}
	if len(f.Vendors) == 0 {
		return nil, fmt.Errorf("%w: %s: vendors: name at least one vendor and its partition", ErrVendorsFile, name)
	}
	seen := map[string]bool{}
	for i, v := range f.Vendors {
		switch {
		case v.Name == "" || seen[v.Name]:
			return nil, fmt.Errorf("%w: %s: vendors[%d].name: %q is empty or used twice", ErrVendorsFile, name, i, v.Name)
		case v.Partition == "":
			return nil, fmt.Errorf("%w: %s: vendors[%d].partition: vendor %q needs the partition holding its nodes", ErrVendorsFile, name, i, v.Name)
		}
		seen[v.Name] = true
	}
	return &f, nil
}

// LiveOptions say how to reach a live cluster.
type LiveOptions struct {
	Addr, Token string
	Vendors     *VendorsFile
	// AllowFaults names the nodes specs may drain, requeue and fault.
	AllowFaults []string
	// WorkDir is a directory on a filesystem the nodes share with this
	// host, writable by the token's user ("" skips specs reading job output).
	WorkDir string
	// Probe is the argv prefix of `parity conform probe` on the nodes
	// (default: parity conform probe, found on the nodes' PATH).
	Probe []string
	// Topology is a topology.conf describing the switch tree ("" = unknown).
	Topology string
	// Ledger is the accounting database, if readable from here.
	Ledger string
}

// LiveTarget runs the suite against a running cluster through its API.
type LiveTarget struct {
	opts    LiveOptions
	vendors []VendorTarget
	tree    *topology.SwitchTree
	// inv holds each vendor node's registered inventory, read once at the
	// start; noInv says why a node has none.
	inv   map[string]gres.Inventory
	noInv map[string]string
}

var _ Target = (*LiveTarget)(nil)

// NewLive resolves each vendor's nodes from the controller.
func NewLive(ctx context.Context, opts LiveOptions) (*LiveTarget, error) {
	if opts.Vendors == nil {
		return nil, fmt.Errorf("%w: a live cluster needs --vendors FILE", ErrVendorsFile)
	}
	if len(opts.Probe) == 0 {
		opts.Probe = []string{"parity", "conform", "probe"}
	}
	t := &LiveTarget{opts: opts}
	if opts.Topology != "" {
		text, err := os.ReadFile(opts.Topology)
		if err != nil {
			return nil, fmt.Errorf("conformance: --topology: %w", err)
		}
		if t.tree, err = topology.ParseTopologyConf(string(text)); err != nil {
			return nil, fmt.Errorf("conformance: --topology %s: %w", opts.Topology, err)
		}
	}
	cl, err := t.Client(ctx, "")
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	infos := map[string]vendors.Info{}
	for _, d := range builtin.Drivers(builtin.Options{}) {
		infos[d.Info().Name] = d.Info() // Info does no I/O
	}
	for _, e := range opts.Vendors.Vendors {
		vt, err := liveVendor(ctx, cl, e, infos)
		if err != nil {
			return nil, err
		}
		t.vendors = append(t.vendors, vt)
	}
	t.inv, t.noInv = map[string]gres.Inventory{}, map[string]string{}
	for _, vt := range t.vendors {
		for _, n := range vt.Nodes {
			inv, err := cl.NodeInventory(ctx, n)
			if err != nil {
				t.noInv[n] = client.Message(err)
				continue
			}
			t.inv[n] = inv
		}
	}
	return t, nil
}

func liveVendor(ctx context.Context, cl *client.Client, e VendorEntry, infos map[string]vendors.Info) (VendorTarget, error) {
	nodes, err := cl.ListNodes(ctx, nil)
	if err != nil {
		return VendorTarget{}, fmt.Errorf("conformance: list nodes: %s", client.Message(err))
	}
	vt := VendorTarget{Name: e.Name, Partition: e.Partition, Feature: e.Feature, GPUType: e.GPUType, Info: infos[e.Name]}
	if vt.Info.Name == "" {
		vt.Info = vendors.Info{Name: e.Name, Vendor: e.Name}
	}
	if len(e.VisibleDevicesEnv) > 0 {
		vt.Info.VisibleDevicesEnv = e.VisibleDevicesEnv
	}
	for _, n := range nodes {
		if !slices.Contains(n.GetPartitions(), e.Partition) || (e.Feature != "" && !slices.Contains(n.GetFeatures(), e.Feature)) {
			continue
		}
		gpus := 0
		for _, g := range n.GetGpus() {
			if g.GetParent() == "" && (vt.GPUType == "" || g.GetType() == vt.GPUType) {
				gpus++
				if vt.GPUType == "" {
					vt.GPUType = g.GetType()
				}
			}
		}
		if len(vt.Nodes) == 0 || gpus < vt.GPUsPerNode {
			vt.GPUsPerNode = gpus // the smallest node bounds what specs may ask
		}
		vt.Nodes = append(vt.Nodes, n.GetName())
	}
	if len(vt.Nodes) == 0 {
		return VendorTarget{}, fmt.Errorf("%w: vendor %q: no node is in partition %q with feature %q", ErrVendorsFile, e.Name, e.Partition, e.Feature)
	}
	sort.Strings(vt.Nodes)
	return vt, nil
}

func (t *LiveTarget) Name() string            { return "cluster:" + t.opts.Addr }
func (t *LiveTarget) Lab() string             { return "" }
func (t *LiveTarget) Vendors() []VendorTarget { return slices.Clone(t.vendors) }
func (t *LiveTarget) ProbeCommand() []string  { return slices.Clone(t.opts.Probe) }
func (t *LiveTarget) Ledger() string          { return t.opts.Ledger }

// Client dials with the given token whatever the user: the token says who
// the suite is (drains and requeues need an operator or admin).
func (t *LiveTarget) Client(ctx context.Context, _ string) (*client.Client, error) {
	return client.Dial(ctx, t.opts.Addr, t.opts.Token)
}

// WorkDir is the shared directory, if one was given.
func (t *LiveTarget) WorkDir() (string, error) {
	if t.opts.WorkDir == "" {
		return "", fmt.Errorf("%w: no --workdir on a filesystem shared with the nodes, so job output cannot be read", ErrNotSupported)
	}
	return t.opts.WorkDir, nil
}

// Isolation is what the specs test on a live cluster, never assumed away.
func (t *LiveTarget) Isolation() (bool, string) { return true, "" }

// Inventory is what node's agent registered with the controller.
func (t *LiveTarget) Inventory(node string) (gres.Inventory, error) {
	if inv, ok := t.inv[node]; ok {
		return inv, nil
	}
	why := t.noInv[node]
	if why == "" {
		why = "not a node of any vendor under test"
	}
	return gres.Inventory{}, fmt.Errorf("%w: %s's device inventory (files, links, CPUs): %s", ErrNotSupported, node, why)
}

func (t *LiveTarget) SwitchTree() (*topology.SwitchTree, error) {
	if t.tree == nil {
		return nil, fmt.Errorf("%w: the cluster's switch tree is unknown (pass --topology topology.conf)", ErrNotSupported)
	}
	return t.tree, nil
}

// JobCPUs: real nodes run a job on exactly its allocated CPUs.
func (t *LiveTarget) JobCPUs(_ string, alloc topology.CPUSet) (topology.CPUSet, error) {
	return alloc, nil
}

func (t *LiveTarget) MayDisturb(node string) (bool, string) {
	if slices.Contains(t.opts.AllowFaults, node) {
		return true, ""
	}
	return false, fmt.Sprintf("live cluster: disturbing specs (drain, requeue, faults) run only on nodes named with --allow-faults; %s was not", node)
}

func (t *LiveTarget) Faults(node string) (presets.Faults, error) {
	if ok, why := t.MayDisturb(node); !ok {
		return nil, fmt.Errorf("%w: %s", ErrNotSupported, why)
	}
	return nil, fmt.Errorf("%w: %s runs real hardware: this build injects faults only into simulated labs", ErrNotSupported, node)
}

func (t *LiveTarget) Replica(context.Context, string) (*presets.Machine, []vendors.Driver, error) {
	return nil, nil, fmt.Errorf("%w: rebuilding a node's drivers needs a lab (certify a node's drivers there with `parity conform driver`)", ErrNotSupported)
}

func (t *LiveTarget) DeviceFileMajor(node, _ string) (uint32, error) {
	return 0, fmt.Errorf("%w: %s's device files are not visible from here", ErrNotSupported, node)
}

func (t *LiveTarget) Close(context.Context) error { return nil }
