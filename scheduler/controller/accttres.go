package controller

import (
	"net"
	"slices"
	"strconv"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/config"
)

// slurmTRES are the TRES slurmdbd always tracks, with its ids (sacctmgr
// show tres on the anchor: cpu 1 ... pages 8).
var slurmTRES = [][2]string{{"cpu", ""}, {"mem", ""}, {"energy", ""}, {"node", ""}, {"billing", ""}, {"fs", "disk"}, {"vmem", ""}, {"pages", ""}}

// tresTable is what sacctmgr show tres lists: Slurm's fixed TRES, then
// the GPUs Parity always accounts, as a site with AccountingStorageTRES=
// gres/gpu,gres/gpu:TYPE sees them (gres/gpu 1001, then each type by
// name from 1002, the ids the REST answers use).
func tresTable(cfg *config.Cluster) []*pb.AssocTRES {
	out := make([]*pb.AssocTRES, 0, len(slurmTRES)+2)
	for i, t := range slurmTRES {
		out = append(out, &pb.AssocTRES{Type: t[0], Name: t[1], Id: int32(i + 1)})
	}
	out = append(out, &pb.AssocTRES{Type: "gres", Name: "gpu", Id: 1001})
	var types []string
	for _, n := range cfg.NodeNames() {
		if t := cfg.NodeSpec(n).GPUType; t != "" && !slices.Contains(types, t) {
			types = append(types, t)
		}
	}
	slices.Sort(types)
	for i, t := range types {
		out = append(out, &pb.AssocTRES{Type: "gres", Name: "gpu:" + t, Id: int32(1002 + i)})
	}
	return out
}

// controlAddr is the controller's host and port for sacctmgr show
// cluster's ControlHost and ControlPort.
func (c *Controller) controlAddr() (string, int32) {
	if c.lis == nil {
		return "", 0
	}
	host, port, err := net.SplitHostPort(c.lis.Addr().String())
	if err != nil {
		return "", 0
	}
	p, _ := strconv.Atoi(port)
	return host, int32(p)
}
