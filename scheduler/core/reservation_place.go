package core

import (
	"fmt"
	"strings"
	"time"

	"github.com/parityhpc/parity/scheduler/policy"
	"github.com/parityhpc/parity/topology"
)

// ResvRequest asks for a reservation by amount (scontrol create
// reservation TRES=… or NodeCnt=…); PlaceReservation turns it into
// concrete nodes or parts of nodes.
type ResvRequest struct {
	Name            string
	Start, End      time.Time
	Users, Accounts []string
	Flags           ResvFlags
	// Partition restricts the nodes chosen from ("" = every node).
	Partition string
	// TRES is what to reserve: node=N for whole nodes, or any of
	// gres/gpu=N (gres/gpu:<type>=N), cpu=N and mem=M for parts of nodes.
	TRES policy.TRES
}

// nodeFree is what one node offers a reservation at its start.
type nodeFree struct {
	n      int
	cpus   int
	mem    int64
	mask   uint64 // free devices
	anyJob bool   // a running job (or another reservation) holds part of it
}

// PlaceReservation chooses what a TRES or node-count reservation holds:
// by default only resources no running job holds at its start (IGNORE_JOBS
// lifts that) and no other reservation holds during its window (unless
// either is MAINT). Whole nodes are taken in node order; GPUs on as few
// nodes as possible, each node's set chosen for its links; CPUs and
// memory alongside the GPUs in proportion, or node by node. The result
// passes CheckReservation.
func PlaceReservation(snap Snapshot, req ResvRequest) (Reservation, error) {
	r := Reservation{Name: req.Name, Start: req.Start, End: req.End, Users: req.Users, Accounts: req.Accounts, Flags: req.Flags}
	if req.Name == "" {
		return r, fmt.Errorf("%w: ReservationName is empty", ErrReservation)
	}
	want := map[string]int64{}
	var gpuKey string
	for k, v := range req.TRES {
		switch {
		case k == "node" || k == "cpu" || k == "mem":
		case k == "gres/gpu" || strings.HasPrefix(k, "gres/gpu:"):
			if gpuKey != "" {
				return r, fmt.Errorf("%w %s: TRES=%s names more than one GPU TRES", ErrReservation, req.Name, req.TRES)
			}
			gpuKey = k
		default:
			return r, fmt.Errorf("%w %s: TRES %s cannot be reserved (node, cpu, mem, gres/gpu[:type])", ErrReservation, req.Name, k)
		}
		if v > 0 {
			want[k] = v
		}
	}
	if len(want) == 0 {
		return r, fmt.Errorf("%w %s: TRES=%s reserves nothing", ErrReservation, req.Name, req.TRES)
	}
	if _, ok := want["node"]; ok && len(want) > 1 {
		return r, fmt.Errorf("%w %s: TRES=%s: node= cannot be combined with other TRES", ErrReservation, req.Name, req.TRES)
	}
	free, err := freeAtStart(&snap, req)
	if err != nil {
		return r, err
	}
	if n := want["node"]; n > 0 {
		for _, f := range free {
			if int64(len(r.Nodes)) < n && !f.anyJob {
				r.Nodes = append(r.Nodes, snap.Nodes[f.n].Name)
			}
		}
		if int64(len(r.Nodes)) < n {
			return r, fmt.Errorf("%w %s: needs %d whole node(s) free at %s; %d are", ErrReservation, req.Name, n, req.Start.UTC().Format(time.RFC3339), len(r.Nodes))
		}
		return r, nil
	}
	r.Slices, err = placeSlices(&snap, req, free, want, gpuKey)
	return r, err
}

// freeAtStart lists the candidate nodes with what is free at the start.
func freeAtStart(snap *Snapshot, req ResvRequest) ([]nodeFree, error) {
	var inPart map[string]bool
	if req.Partition != "" {
		for _, p := range snap.Partitions {
			if p.Name == req.Partition {
				inPart = map[string]bool{}
				for _, n := range p.Nodes {
					inPart[n] = true
				}
			}
		}
		if inPart == nil {
			return nil, fmt.Errorf("%w %s: unknown partition %q", ErrReservation, req.Name, req.Partition)
		}
	}
	idx := map[string]int{}
	var out []nodeFree
	for i := range snap.Nodes {
		nd := &snap.Nodes[i]
		if nd.Shape == nil || len(nd.DeviceUUIDs) != len(nd.Shape.Devices) || !nd.State.Usable() || inPart != nil && !inPart[nd.Name] {
			continue
		}
		f := nodeFree{n: i, cpus: nd.Shape.CPUs.Count(), mem: nd.Shape.MemoryMB}
		for d := range nd.Shape.Devices {
			if !contains(nd.DrainedDevices, nd.DeviceUUIDs[d]) {
				f.mask |= 1 << uint(d)
			}
		}
		idx[nd.Name] = len(out)
		out = append(out, f)
	}
	start, end := unixS(req.Start), resvEnd(Reservation{End: req.End})
	if req.Flags&ResvIgnoreJobs == 0 {
		for i := range snap.Jobs {
			j := &snap.Jobs[i]
			if j.State != JobRunning || runningEnd(snap, j) <= start {
				continue
			}
			for _, a := range j.Alloc {
				if k, ok := idx[a.Node]; ok {
					out[k].take(&snap.Nodes[out[k].n], a.CPUs.Count(), a.MemoryMB, a.Devices)
				}
			}
		}
	}
	for _, o := range snap.Reservations {
		if o.Name == req.Name || unixS(o.Start) >= end || resvEnd(o) <= start || o.Flags&ResvMaint != 0 || req.Flags&ResvMaint != 0 {
			continue
		}
		for _, n := range o.Nodes {
			if k, ok := idx[n]; ok {
				out[k] = nodeFree{n: out[k].n, anyJob: true}
			}
		}
		for _, sl := range o.Slices {
			if k, ok := idx[sl.Node]; ok {
				out[k].take(&snap.Nodes[out[k].n], sl.CPUs, sl.MemoryMB, sl.Devices)
			}
		}
	}
	return out, nil
}

func (f *nodeFree) take(nd *Node, cpus int, mem int64, devices []string) {
	f.anyJob = true
	f.cpus = max(f.cpus-cpus, 0)
	f.mem = max(f.mem-mem, 0)
	for _, u := range devices {
		if d := deviceIndex(nd, u); d >= 0 {
			f.mask &^= 1 << uint(d)
		}
	}
}

// placeSlices fills the GPU amount on the nodes with the most free
// devices of the type first (fewest nodes), then CPUs and memory.
func placeSlices(snap *Snapshot, req ResvRequest, free []nodeFree, want map[string]int64, gpuKey string) ([]ResvSlice, error) {
	gpus, typ := want[gpuKey], strings.TrimPrefix(strings.TrimPrefix(gpuKey, "gres/gpu"), ":")
	typeMask := func(f nodeFree) uint64 {
		var m uint64
		for d, slot := range snap.Nodes[f.n].Shape.Devices {
			if typ == "" || slot.Type == typ {
				m |= 1 << uint(d)
			}
		}
		return m & f.mask
	}
	order := make([]int, len(free))
	for i := range order {
		order[i] = i
	}
	if gpus > 0 {
		// Most free devices first, node order among equals.
		for i := 1; i < len(order); i++ {
			for k := i; k > 0 && popcount(typeMask(free[order[k]])) > popcount(typeMask(free[order[k-1]])); k-- {
				order[k], order[k-1] = order[k-1], order[k]
			}
		}
	}
	var out []ResvSlice
	leftG, leftC, leftM := gpus, want["cpu"], want["mem"]
	for _, i := range order {
		f := free[i]
		nd := &snap.Nodes[f.n]
		sl := ResvSlice{Node: nd.Name}
		if gpus > 0 {
			avail := typeMask(f)
			k := min(int(leftG), popcount(avail))
			if k == 0 {
				continue
			}
			sl.Devices = chooseFree(nd, avail, k)
			leftG -= int64(k)
			share := func(total, left int64) int64 { return min(left, (total*int64(k)+gpus-1)/gpus) }
			sl.CPUs = int(min(share(want["cpu"], leftC), int64(f.cpus)))
			sl.MemoryMB = min(share(want["mem"], leftM), f.mem)
		} else {
			sl.CPUs = int(min(leftC, int64(f.cpus)))
			sl.MemoryMB = min(leftM, f.mem)
			if sl.CPUs == 0 && sl.MemoryMB == 0 {
				continue
			}
		}
		leftC -= int64(sl.CPUs)
		leftM -= sl.MemoryMB
		out = append(out, sl)
		if leftG <= 0 && leftC <= 0 && leftM <= 0 {
			return out, nil
		}
	}
	return nil, fmt.Errorf("%w %s: TRES=%s is not free at %s (short by gpus=%d cpu=%d mem=%dM)", ErrReservation, req.Name, req.TRES,
		req.Start.UTC().Format(time.RFC3339), max(leftG, 0), max(leftC, 0), max(leftM, 0))
}

// chooseFree picks k of the avail devices, best linked together.
func chooseFree(nd *Node, avail uint64, k int) []string {
	var ids []int
	for m := avail; m != 0; m &= m - 1 {
		ids = append(ids, trailing(m))
	}
	var pick []int
	if ch, ok := topology.ChooseDevices(nd.Shape.graph, nd.Shape.attrs, ids, k); ok {
		pick = ch.Devices
	} else {
		pick = ids[:k]
	}
	out := make([]string, len(pick))
	for i, d := range pick {
		out[i] = nd.DeviceUUIDs[d]
	}
	return out
}
