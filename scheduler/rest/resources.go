package rest

import (
	"slices"
	"strconv"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
)

type resourcesResp struct {
	Nodes []*nodeLayout `json:"nodes"`
	envelope
}

// nodeLayout is v0.0.44_node_resource_layout: what a job holds on one node.
type nodeLayout struct {
	Node           string        `json:"node"`
	SocketsPerNode int32         `json:"sockets_per_node"`
	CoresPerSocket int32         `json:"cores_per_socket"`
	MemAlloc       int64         `json:"mem_alloc"`
	CoreBitmap     string        `json:"core_bitmap"`
	Gres           []*gresLayout `json:"gres"`
}

// gresLayout is v0.0.44_node_gres_layout: one GRES type's devices.
type gresLayout struct {
	Name  string `json:"name"`
	Type  string `json:"type,omitempty"`
	Count int64  `json:"count"`
	Index string `json:"index"`
}

// serveResources answers the job's resource layout from its allocation
// (Jobs.Get, so another user's job is as unknown as a job never
// submitted) and each node's inventory, which numbers its devices. The
// core bitmap is the CPU list the allocation pins, as a range list.
func serveResources(h *Handler, c *call) (any, error) {
	jid, task, err := jobRef(c.r.PathValue("job_id"))
	if err != nil {
		return nil, err
	}
	j, err := h.b.Jobs.Get(c.ctx, &pb.GetJobRequest{JobId: jid, ArrayTaskId: task})
	if err != nil {
		return nil, err
	}
	if len(j.GetAlloc()) == 0 {
		return nil, status.Errorf(codes.FailedPrecondition, "job %s holds no resources (it is %s)", c.r.PathValue("job_id"), j.GetState())
	}
	out := &resourcesResp{Nodes: make([]*nodeLayout, 0, len(j.GetAlloc()))}
	for _, a := range j.GetAlloc() {
		n, err := h.b.Nodes.Get(c.ctx, &pb.GetNodeRequest{Name: a.GetNode()})
		if err != nil {
			return nil, err
		}
		out.Nodes = append(out.Nodes, &nodeLayout{Node: a.GetNode(), SocketsPerNode: n.GetSockets(), CoresPerSocket: n.GetCoresPerSocket(),
			MemAlloc: a.GetMemoryMb(), CoreBitmap: a.GetCpus(), Gres: gresOf(n.GetGpus(), a.GetDevices())})
	}
	return out, nil
}

// gresOf groups the allocated devices by type with their local indexes.
func gresOf(gpus []*pb.GPU, held []string) []*gresLayout {
	byType := map[string][]int{}
	var types []string
	for _, g := range gpus {
		if !slices.Contains(held, g.GetUuid()) {
			continue
		}
		if _, ok := byType[g.GetType()]; !ok {
			types = append(types, g.GetType())
		}
		byType[g.GetType()] = append(byType[g.GetType()], int(g.GetIndex()))
	}
	slices.Sort(types)
	out := []*gresLayout{}
	for _, t := range types {
		idx := byType[t]
		slices.Sort(idx)
		out = append(out, &gresLayout{Name: "gpu", Type: t, Count: int64(len(idx)), Index: indexRanges(idx)})
	}
	return out
}

// indexRanges writes sorted indexes as Slurm's range list: 0-2,5.
func indexRanges(idx []int) string {
	var b []byte
	for i := 0; i < len(idx); {
		j := i
		for j+1 < len(idx) && idx[j+1] == idx[j]+1 {
			j++
		}
		if len(b) > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, int64(idx[i]), 10)
		if j > i {
			b = append(b, '-')
			b = strconv.AppendInt(b, int64(idx[j]), 10)
		}
		i = j + 1
	}
	return string(b)
}
