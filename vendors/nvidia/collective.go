package nvidia

import (
	"strings"

	"github.com/parityhpc/parity/gres"
	"github.com/parityhpc/parity/vendors"
	"github.com/parityhpc/parity/vendors/collective"
)

// ncclDialect is how NCCL reads its topology file: NVLink lanes as nvlink
// elements, GPUs as 3D controllers, the compute capability as sm.
var ncclDialect = collective.Dialect{
	FileName: "nccl-topo.xml", LinkElement: "nvlink", DeviceClass: "0x030200",
	Attrs: func(d gres.Device) [][2]string {
		if cc := d.Attributes["computeCapability"]; cc != "" {
			return [][2]string{{"sm", strings.ReplaceAll(cc, ".", "")}}
		}
		return nil
	},
}

// addTopologyFile gives the job NCCL's topology of the GPUs it holds.
func addTopologyFile(out *vendors.Prepared, inv gres.Inventory, uuids []string) error {
	f, ok, err := collective.File(inv, uuids, ncclDialect)
	if err != nil || !ok {
		return err
	}
	out.Files = append(out.Files, f)
	return nil
}
