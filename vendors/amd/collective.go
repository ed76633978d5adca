package amd

import (
	"fmt"
	"strconv"

	"github.com/parityhpc/parity/gres"
	"github.com/parityhpc/parity/vendors"
	"github.com/parityhpc/parity/vendors/collective"
)

// rcclDialect is how RCCL reads the topology file it shares with NCCL:
// xGMI links as xgmi elements, the GPU's gfx target as gcn.
var rcclDialect = collective.Dialect{
	FileName: "rccl-topo.xml", LinkElement: "xgmi", DeviceClass: "0x038000",
	Attrs: func(d gres.Device) [][2]string {
		if gfx := gfxTarget(d.Attributes["gfx_target_version"]); gfx != "" {
			return [][2]string{{"gcn", gfx}}
		}
		return nil
	},
}

// gfxTarget writes KFD's gfx_target_version (major·10000 + minor·100 +
// stepping) as the gfx name ROCm uses: 90402 is gfx942, 90010 gfx90a.
func gfxTarget(v string) string {
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		return ""
	}
	major, minor, step := n/10000, n/100%100, n%100
	if minor > 15 || step > 15 {
		return ""
	}
	return fmt.Sprintf("gfx%d%x%x", major, minor, step)
}

// addTopologyFile gives the job RCCL's topology of the GPUs it holds.
func addTopologyFile(out *vendors.Prepared, inv gres.Inventory, uuids []string) error {
	f, ok, err := collective.File(inv, uuids, rcclDialect)
	if err != nil || !ok {
		return err
	}
	out.Files = append(out.Files, f)
	return nil
}
