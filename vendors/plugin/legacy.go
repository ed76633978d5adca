package plugin

import (
	"github.com/parityhpc/parity/gres"
	"github.com/parityhpc/parity/topology"
)

// v1LinkClass returns the class of a link kind protocol version 1 knew. A
// version 1 adapter sends a link's kind alone; mapping it here, on the
// adapter side of the driver contract, keeps such adapters placing as they
// did while no code past vendors/ reads a link's name.
func v1LinkClass(kind topology.LinkKind) topology.LinkClass {
	switch kind {
	case "nvlink", "xgmi": // the fabrics version 1 formed islands from
		return topology.ClassFabric
	case topology.LinkPCIeSwitch:
		return topology.ClassPCIeSwitch
	case topology.LinkPCIeHost, topology.LinkSystem:
		return topology.ClassHostBridge
	}
	return topology.ClassUnknown
}

// classifyV1Links gives every link of a version 1 inventory its class from
// its kind; a kind version 1 did not know stays unclassified.
func classifyV1Links(inv *gres.Inventory) {
	for i := range inv.Devices {
		for j := range inv.Devices[i].Links {
			l := &inv.Devices[i].Links[j]
			l.Class = v1LinkClass(l.Kind)
		}
	}
}
