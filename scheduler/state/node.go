package state

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/parityhpc/parity/gres"
)

// ActorHealth is who the health policy acts as in node reasons and the
// decision log; a drain it did not set is never undone by it (NHC's rule).
const ActorHealth = "health"

// Node is a node's administrative state: drained or down and why, and
// which of its GPUs are drained by whom. What its agent reports (its
// inventory, heartbeats, samples) is the controller's.
type Node struct {
	Name        string
	Drain, Down bool
	Reason      string
	ReasonUser  string
	ReasonTime  time.Time
	GPUDrain    map[string]string // uuid → reason
	GPUDrainBy  map[string]string // uuid → who drained it (a user, or ActorHealth)
	// Exempt are GPUs whose health decisions are logged, not applied.
	Exempt map[string]bool
	// Inventory is what the node's agent last registered; nil before.
	Inventory *gres.Inventory
}

// NodeState is what SetNode makes of a node.
type NodeState string

// Node state changes (scontrol update node State=…).
const (
	NodeDrain   NodeState = "DRAIN"
	NodeDown    NodeState = "DOWN"
	NodeUndrain NodeState = "UNDRAIN"
	NodeResume  NodeState = "RESUME"
	// NodeBack returns a node taken down for not responding (its agent
	// registered again); a node down for another reason stays down.
	NodeBack NodeState = "BACK"
)

// ReasonNotResponding is the reason of a node the scheduler took down
// because its agent fell silent.
const ReasonNotResponding = "Not responding"

// SetNode drains, downs, undrains or resumes a node (an operator, or the
// scheduler itself: a silent agent, a node short of what it should have).
// IfUp: only when the node is not drained already (a registration's
// shortfall never overrides a drain). The jobs of a node taken down are
// ended by End commands of their own.
type SetNode struct {
	Node, By, Reason string
	State            NodeState
	IfUp             bool
}

// DrainGPUs drains GPUs of one node (Resume: resumes them) for an
// operator; the devices are the node's UUIDs, resolved at the edge.
type DrainGPUs struct {
	Node, By, Reason string
	Devices          []string
	Resume           bool
}

// HealthDrain is the health policy draining a GPU (Device) or, Device
// empty, the node. An operator's drain is kept. Capped: the cluster-wide
// cap of automatic drains is reached, so nothing is drained.
type HealthDrain struct {
	Node, Device, Reason string
	Capped               bool
}

// HealthResume is the health policy resuming a GPU (or, Device empty, the
// node) it drained; what an operator drained stays drained.
type HealthResume struct{ Node, Device string }

// HealthHold keeps a flapping GPU the policy drained drained until an
// operator resumes it (its reason says so).
type HealthHold struct{ Node, Device, Reason string }

// ExemptGPUs exempts GPUs of one node from the health policy's decisions
// (they are logged, not applied), or with Clear ends the exemption.
type ExemptGPUs struct {
	Node, By string
	Devices  []string
	Clear    bool
}

// Register records the inventory a node's agent registered with (what
// its drivers discovered). Liveness (heartbeats) is not state: it is what
// a replica sees, not what the cluster decided.
type Register struct {
	Node      string
	Inventory *gres.Inventory
}

func (Register) command()     {}
func (SetNode) command()      {}
func (ExemptGPUs) command()   {}
func (DrainGPUs) command()    {}
func (HealthDrain) command()  {}
func (HealthResume) command() {}
func (HealthHold) command()   {}

// NodeLogged is a decision-log record about a node's state: Kind is
// KindDrain, KindDown or KindResumeNode; Devices names GPUs when the
// change is theirs.
type NodeLogged struct {
	Kind, Node, Actor, Reason string
	Devices                   []string
}

func (NodeLogged) effect() {}

// Node-record kinds of the decision log.
const (
	KindDrain      = "drain"
	KindDown       = "down"
	KindResumeNode = "resume"
)

// AddNode puts a configured node in the table, up and undrained, and
// returns its record (the one already there when there is one).
func (m *Machine[R]) AddNode(name string) *Node {
	if n := m.nodes[name]; n != nil {
		return n
	}
	n := &Node{Name: name}
	m.nodes[name] = n
	return n
}

// Node returns a node's record, nil when it is not configured. It is the
// machine's: read it only.
func (m *Machine[R]) Node(name string) *Node { return m.nodes[name] }

// RestoreNode puts a node's durable state back as it was (no transition,
// no effects); the node must have been added.
func (m *Machine[R]) RestoreNode(rec Node) error {
	n := m.nodes[rec.Name]
	if n == nil {
		return fmt.Errorf("%w: restore node %q: not configured", ErrInvalid, rec.Name)
	}
	*n = rec
	return nil
}

func (m *Machine[R]) node(name string) (*Node, error) {
	n := m.nodes[name]
	if n == nil {
		return nil, refuse(ErrNotFound, fmt.Sprintf("node %q not found", name))
	}
	return n, nil
}

func (m *Machine[R]) setNode(c SetNode, now time.Time) ([]Effect, error) {
	n, err := m.node(c.Node)
	if err != nil {
		return nil, err
	}
	kind := KindResumeNode
	switch c.State {
	case NodeDrain, NodeDown:
		if strings.TrimSpace(c.Reason) == "" {
			return nil, refuse(ErrInvalid, "You must specify a reason when DOWNING or DRAINING a node")
		}
		if c.IfUp && n.Drain {
			return nil, nil
		}
		kind = KindDrain
		n.Drain = n.Drain || c.State == NodeDrain
		if c.State == NodeDown {
			kind, n.Down = KindDown, true
		}
		n.Reason, n.ReasonUser, n.ReasonTime = c.Reason, c.By, now
	case NodeUndrain:
		n.Drain = false
		if !n.Down {
			n.Reason, n.ReasonUser = "", ""
		}
	case NodeResume:
		n.Drain, n.Down = false, false
		n.Reason, n.ReasonUser, n.ReasonTime = "", "", now
	case NodeBack:
		if !n.Down || n.Reason != ReasonNotResponding {
			return nil, nil
		}
		n.Down, n.Reason, n.ReasonUser = false, "", ""
		return nil, nil
	default:
		return nil, refuse(ErrInvalid, fmt.Sprintf("State=%s: must be DRAIN, DOWN, RESUME or UNDRAIN", c.State))
	}
	return []Effect{NodeLogged{Kind: kind, Node: n.Name, Actor: c.By, Reason: c.Reason}}, nil
}

func (m *Machine[R]) drainGPUs(c DrainGPUs) ([]Effect, error) {
	n, err := m.node(c.Node)
	if err != nil {
		return nil, err
	}
	if len(c.Devices) == 0 {
		return nil, refuse(ErrInvalid, "devices: name the GPUs to drain or resume")
	}
	if c.Resume {
		for _, u := range c.Devices {
			delete(n.GPUDrain, u)
			delete(n.GPUDrainBy, u)
		}
		return []Effect{NodeLogged{Kind: KindResumeNode, Node: n.Name, Actor: c.By, Reason: c.Reason, Devices: c.Devices}}, nil
	}
	if strings.TrimSpace(c.Reason) == "" {
		return nil, refuse(ErrInvalid, "You must specify a reason when DOWNING or DRAINING a node")
	}
	for _, u := range c.Devices {
		n.drainGPU(u, c.Reason, c.By)
	}
	return []Effect{NodeLogged{Kind: KindDrain, Node: n.Name, Actor: c.By, Reason: c.Reason, Devices: c.Devices}}, nil
}

func (m *Machine[R]) register(c Register) ([]Effect, error) {
	n, err := m.node(c.Node)
	if err != nil {
		return nil, err
	}
	if c.Inventory == nil {
		return nil, refuse(ErrInvalid, fmt.Sprintf("register %s: no inventory", c.Node))
	}
	n.Inventory = c.Inventory
	return nil, nil
}

func (m *Machine[R]) exemptGPUs(c ExemptGPUs) ([]Effect, error) {
	n, err := m.node(c.Node)
	if err != nil {
		return nil, err
	}
	if len(c.Devices) == 0 {
		return nil, refuse(ErrInvalid, "devices: name the GPUs to exempt from health decisions")
	}
	if n.Exempt == nil {
		n.Exempt = map[string]bool{}
	}
	for _, u := range c.Devices {
		if c.Clear {
			delete(n.Exempt, u)
		} else {
			n.Exempt[u] = true
		}
	}
	return nil, nil
}

func (n *Node) drainGPU(uuid, reason, by string) {
	if n.GPUDrain == nil {
		n.GPUDrain = map[string]string{}
	}
	if n.GPUDrainBy == nil {
		n.GPUDrainBy = map[string]string{}
	}
	n.GPUDrain[uuid], n.GPUDrainBy[uuid] = reason, by
}

// drainedBy says who drained a GPU (or, uuid empty, the node), if it is.
func (n *Node) drainedBy(uuid string) (string, bool) {
	if uuid == "" {
		return n.ReasonUser, n.Drain
	}
	_, drained := n.GPUDrain[uuid]
	return n.GPUDrainBy[uuid], drained
}

func orUnknown(s string) string {
	if strings.TrimSpace(s) == "" {
		return "an admin"
	}
	return s
}

func (m *Machine[R]) healthDrain(c HealthDrain, now time.Time) ([]Effect, error) {
	n, err := m.node(c.Node)
	if err != nil {
		return nil, err
	}
	if by, drained := n.drainedBy(c.Device); drained && by != ActorHealth {
		what := "already drained by "
		if c.Device == "" {
			what = "node already drained by "
		}
		return nil, refuse(ErrConflict, what+orUnknown(by)+": kept")
	}
	if c.Capped {
		return nil, refuse(ErrExhausted, "drain cap reached")
	}
	reason := "health: " + c.Reason
	if c.Device == "" {
		n.Drain, n.Reason, n.ReasonUser, n.ReasonTime = true, reason, ActorHealth, now
		return []Effect{NodeLogged{Kind: KindDrain, Node: n.Name, Actor: ActorHealth, Reason: c.Reason}}, nil
	}
	n.drainGPU(c.Device, reason, ActorHealth)
	return []Effect{NodeLogged{Kind: KindDrain, Node: n.Name, Actor: ActorHealth, Reason: c.Reason, Devices: []string{c.Device}}}, nil
}

func (m *Machine[R]) healthResume(c HealthResume, now time.Time) ([]Effect, error) {
	n, err := m.node(c.Node)
	if err != nil {
		return nil, err
	}
	by, drained := n.drainedBy(c.Device)
	switch {
	case !drained:
		return nil, nil
	case by != ActorHealth:
		return nil, refuse(ErrConflict, "drained by "+orUnknown(by)+": left drained")
	case c.Device == "":
		n.Drain, n.Reason, n.ReasonUser, n.ReasonTime = false, "", "", now
		return []Effect{NodeLogged{Kind: KindResumeNode, Node: n.Name, Actor: ActorHealth}}, nil
	}
	delete(n.GPUDrain, c.Device)
	delete(n.GPUDrainBy, c.Device)
	return []Effect{NodeLogged{Kind: KindResumeNode, Node: n.Name, Actor: ActorHealth, Devices: []string{c.Device}}}, nil
}

func (m *Machine[R]) healthHold(c HealthHold) ([]Effect, error) {
	n, err := m.node(c.Node)
	if err != nil {
		return nil, err
	}
	if n.GPUDrainBy[c.Device] == ActorHealth {
		n.GPUDrain[c.Device] = "health: held: " + c.Reason
	}
	return nil, nil
}

// dumpNodes writes one line per node in name order.
func (m *Machine[R]) dumpNodes(b *strings.Builder) {
	for _, name := range slices.Sorted(maps.Keys(m.nodes)) {
		n := m.nodes[name]
		fmt.Fprintf(b, "node %s", n.Name)
		switch {
		case n.Down:
			b.WriteString(" down")
		case n.Drain:
			b.WriteString(" drain")
		default:
			b.WriteString(" up")
		}
		if n.Down && n.Drain {
			b.WriteString("+drain")
		}
		if n.Reason != "" {
			fmt.Fprintf(b, " reason=%q by=%s", n.Reason, n.ReasonUser)
		}
		if !n.ReasonTime.IsZero() {
			b.WriteString(" at=" + n.ReasonTime.UTC().Format(time.RFC3339))
		}
		for _, u := range slices.Sorted(maps.Keys(n.GPUDrain)) {
			fmt.Fprintf(b, " gpu-drain=%s:%q:%s", u, n.GPUDrain[u], n.GPUDrainBy[u])
		}
		for _, u := range slices.Sorted(maps.Keys(n.Exempt)) {
			b.WriteString(" exempt=" + u)
		}
		if n.Inventory != nil {
			uuids := make([]string, len(n.Inventory.Devices))
			for i, d := range n.Inventory.Devices {
				uuids[i] = d.UUID
			}
			b.WriteString(" devices=" + strings.Join(uuids, ","))
		}
		b.WriteString("\n")
	}
}
