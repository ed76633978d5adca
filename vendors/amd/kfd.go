package amd

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
)

// KFD io_link types (CRAT_IOLINK_TYPE_* in the kernel's kfd_crat.h).
const (
	ioLinkPCIe = 2
	ioLinkXGMI = 11
)

const kfdTopologyDir = "sys/class/kfd/kfd/topology/nodes"

// kfdNode is one node of the KFD topology: a CPU NUMA node (gpu_id 0) or a
// GPU / GPU partition.
type kfdNode struct {
	id    int
	gpuID uint64
	props properties
	bdf   string // GPU nodes only
	links []kfdLink
}

type kfdLink struct {
	typ   uint64
	to    int
	maxBW uint64 // MB/s
}

// kfdTopology is the parsed KFD tree; nil when the host has no KFD.
type kfdTopology struct {
	nodes map[int]*kfdNode
	// gpus are the GPU nodes in KFD order, the order ROCr enumerates.
	gpus []*kfdNode
}

// readKFD parses the KFD topology under root. A missing tree (amdgpu
// loaded without KFD) yields nil and no error.
func readKFD(root string) (*kfdTopology, error) {
	dir := filepath.Join(root, kfdTopologyDir)
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("amd: reading %s: %w", dir, err)
	}
	t := &kfdTopology{nodes: map[int]*kfdNode{}}
	for _, e := range entries {
		id, err := strconv.Atoi(e.Name())
		if err != nil || id < 0 {
			continue
		}
		n, err := readKFDNode(filepath.Join(dir, e.Name()), id)
		if err != nil {
			return nil, err
		}
		t.nodes[id] = n
		if n.gpuID != 0 {
			t.gpus = append(t.gpus, n)
		}
	}
	sort.Slice(t.gpus, func(i, j int) bool { return t.gpus[i].id < t.gpus[j].id })
	return t, nil
}

func readKFDNode(dir string, id int) (*kfdNode, error) {
	n := &kfdNode{id: id}
	gpuID, ok, err := readUint(filepath.Join(dir, "gpu_id"))
	if err != nil {
		return nil, err
	}
	if ok {
		n.gpuID = gpuID
	}
	if n.props, err = readProperties(filepath.Join(dir, "properties")); err != nil {
		return nil, err
	}
	if n.gpuID != 0 {
		if n.bdf, err = kfdBDF(n.props); err != nil {
			return nil, err
		}
	}
	links, err := os.ReadDir(filepath.Join(dir, "io_links"))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("amd: reading %s: %w", filepath.Join(dir, "io_links"), err)
	}
	for _, l := range links {
		p, err := readProperties(filepath.Join(dir, "io_links", l.Name(), "properties"))
		if err != nil {
			return nil, err
		}
		link, err := parseIOLink(p)
		if err != nil {
			return nil, err
		}
		n.links = append(n.links, link)
	}
	return n, nil
}

func parseIOLink(p properties) (kfdLink, error) {
	var l kfdLink
	var ok bool
	var err error
	if l.typ, ok, err = p.uint("type"); err != nil || !ok {
		return l, missingOr(p, "type", err)
	}
	to, ok, err := p.uint("node_to")
	if err != nil || !ok {
		return l, missingOr(p, "node_to", err)
	}
	if to > 1<<20 {
		return l, malformed(p.path, "node_to "+p.m["node_to"], errors.New("node id out of range"))
	}
	l.to = int(to)
	if l.maxBW, _, err = p.uint("max_bandwidth"); err != nil {
		return l, err
	}
	return l, nil
}

func missingOr(p properties, key string, err error) error {
	if err != nil {
		return err
	}
	return fmt.Errorf("%w: %s: key %q missing", ErrMalformed, p.path, key)
}

// kfdBDF renders the PCI address of a GPU node from domain and location_id
// (bus<<8 | device<<3 | function).
func kfdBDF(p properties) (string, error) {
	loc, ok, err := p.uint("location_id")
	if err != nil || !ok {
		return "", missingOr(p, "location_id", err)
	}
	dom, _, err := p.uint("domain")
	if err != nil {
		return "", err
	}
	if loc > 0xffff || dom > 0xffffffff {
		return "", malformed(p.path, fmt.Sprintf("domain %d location_id %d", dom, loc), errors.New("out of PCI range"))
	}
	return fmt.Sprintf("%04x:%02x:%02x.%x", dom, loc>>8, (loc>>3)&0x1f, loc&7), nil
}

// gpusByBDF groups GPU nodes by PCI address, each group in KFD order.
func (t *kfdTopology) gpusByBDF() map[string][]*kfdNode {
	out := map[string][]*kfdNode{}
	if t == nil {
		return out
	}
	for _, n := range t.gpus {
		out[n.bdf] = append(out[n.bdf], n)
	}
	return out
}

// cpuNodeOf returns the CPU (NUMA) node a GPU node's PCIe link reaches, or
// -1. KFD numbers CPU nodes by proximity domain, i.e. by NUMA node.
func (t *kfdTopology) cpuNodeOf(n *kfdNode) int {
	for _, l := range n.links {
		if l.typ != ioLinkPCIe {
			continue
		}
		if peer, ok := t.nodes[l.to]; ok && peer.gpuID == 0 {
			return peer.id
		}
	}
	return -1
}
