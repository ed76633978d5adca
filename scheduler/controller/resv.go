package controller

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/parityhpc/parity/scheduler/api"
	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/config"
	"github.com/parityhpc/parity/scheduler/core"
	"github.com/parityhpc/parity/scheduler/policy"
	"github.com/parityhpc/parity/topology"
)

// EventReservation is the decision log kind of reservation changes.
const EventReservation = "reservation"

var bucketReservations = []byte("reservations") // name → resvRecord (JSON)

// reservation is an admin reservation as the controller keeps it: what the
// core reads plus how it was asked for (a TRES amount is placed again when
// it changes).
type reservation struct {
	core      core.Reservation
	tres      string // TRES= as asked; "" when reserved by node names
	partition string
	createdBy string
	created   time.Time
}

// resvInput is a validated reservation request, before placement.
type resvInput struct {
	name            string
	start, end      time.Time // end zero: no end
	nodes           []string  // whole nodes by name
	users, accounts []string
	flags           core.ResvFlags
	tres            policy.TRES
	tresText        string
	partition       string
}

// Update field names (UpdateReservationRequest.fields).
var resvFields = []string{"start_time", "end_time", "duration", "nodes", "users", "accounts", "flags", "tres", "partition"}

// inputOf is the request a stored reservation answers.
func (r *reservation) inputOf() resvInput {
	in := resvInput{name: r.core.Name, start: r.core.Start, end: r.core.End, users: r.core.Users, accounts: r.core.Accounts,
		flags: r.core.Flags, tresText: r.tres, partition: r.partition}
	if r.tres == "" {
		in.nodes = r.core.Nodes
	} else {
		in.tres, _ = policy.ParseTRES(r.tres) // it parsed when stored
	}
	return in
}

// apply validates one field of spec into in. Errors name scontrol's key
// and the value.
func (c *Controller) applyResvField(in *resvInput, field string, spec *pb.ReservationSpec) error {
	switch field {
	case "start_time":
		if spec.GetStartTime() == nil {
			return status.Error(codes.InvalidArgument, "StartTime is required")
		}
		d := in.end.Sub(in.start)
		in.start = api.Time(spec.GetStartTime())
		if !in.end.IsZero() {
			in.end = in.start.Add(d) // a moved start keeps the duration, as in Slurm
		}
	case "end_time":
		in.end = time.Time{}
		if spec.GetEndTime() != nil {
			in.end = api.Time(spec.GetEndTime())
		}
	case "duration":
		switch d := spec.GetDurationSeconds(); {
		case d == -1:
			in.end = time.Time{}
		case d <= 0:
			return status.Errorf(codes.InvalidArgument, "Duration=%ds: must be positive (or UNLIMITED)", d)
		default:
			in.end = in.start.Add(time.Duration(d) * time.Second)
		}
	case "nodes":
		nodes, err := c.resvNodes(spec.GetNodes())
		if err != nil {
			return err
		}
		in.nodes, in.tres, in.tresText = nodes, nil, ""
	case "users":
		in.users = spec.GetUsers()
	case "accounts":
		for _, a := range spec.GetAccounts() {
			if !slices.ContainsFunc(c.pcfg().Accounts, func(x config.Account) bool { return x.Name == a }) {
				return status.Errorf(codes.InvalidArgument, "Accounts=%s: unknown account %q", strings.Join(spec.GetAccounts(), ","), a)
			}
		}
		in.accounts = spec.GetAccounts()
	case "flags":
		f, err := core.ParseResvFlags(strings.Join(spec.GetFlags(), ","))
		if err != nil {
			return status.Errorf(codes.InvalidArgument, "%v", err)
		}
		in.flags = f
	case "tres":
		t, err := policy.ParseTRES(spec.GetTres())
		if err != nil {
			return status.Errorf(codes.InvalidArgument, "TRES=%s: %v", spec.GetTres(), err)
		}
		if len(t) == 0 {
			return status.Errorf(codes.InvalidArgument, "TRES=%q: reserves nothing", spec.GetTres())
		}
		in.tres, in.tresText, in.nodes = t, t.String(), nil
	case "partition":
		if p := spec.GetPartition(); p != "" {
			if _, ok := c.pcfg().Partition(p); !ok {
				return status.Errorf(codes.InvalidArgument, "PartitionName=%s: invalid partition name specified", p)
			}
		}
		in.partition = spec.GetPartition()
	default:
		return status.Errorf(codes.InvalidArgument, "field %q cannot be updated (want one of %s)", field, strings.Join(resvFields, ", "))
	}
	return nil
}

// resvNodes expands Nodes= (a hostlist or ALL) against the configuration.
func (c *Controller) resvNodes(expr string) ([]string, error) {
	if strings.EqualFold(strings.TrimSpace(expr), "ALL") {
		return slices.Clone(c.st.names), nil
	}
	names, err := topology.ExpandHostlist(expr)
	if err != nil || len(names) == 0 {
		return nil, status.Errorf(codes.InvalidArgument, "Nodes=%s: not a hostlist", expr)
	}
	for _, n := range names {
		if c.st.nodes[n] == nil {
			return nil, status.Errorf(codes.InvalidArgument, "Nodes=%s: unknown node %q", expr, n)
		}
	}
	slices.Sort(names)
	return slices.Compact(names), nil
}

// createInputLocked validates a whole ReservationSpec (c.mu held).
func (c *Controller) createInputLocked(spec *pb.ReservationSpec) (resvInput, error) {
	in := resvInput{name: strings.TrimSpace(spec.GetName())}
	fields := []string{"start_time", "users", "accounts", "flags", "partition"}
	if spec.GetEndTime() != nil && spec.GetDurationSeconds() != 0 {
		return in, status.Error(codes.InvalidArgument, "give EndTime or Duration, not both")
	}
	if spec.GetEndTime() != nil {
		fields = append(fields, "end_time")
	}
	if spec.GetDurationSeconds() != 0 {
		fields = append(fields, "duration")
	}
	switch {
	case spec.GetNodes() != "" && spec.GetTres() != "":
		return in, status.Errorf(codes.InvalidArgument, "Nodes=%s and TRES=%s: give one of them, not both", spec.GetNodes(), spec.GetTres())
	case spec.GetNodes() != "":
		fields = append(fields, "nodes")
	case spec.GetTres() != "":
		fields = append(fields, "tres")
	default:
		return in, status.Error(codes.InvalidArgument, "Nodes= or TRES= (or NodeCnt=) is required")
	}
	for _, f := range fields {
		if err := c.applyResvField(&in, f, spec); err != nil {
			return in, err
		}
	}
	return in, nil
}

// placeLocked turns a request into a reservation checked against the
// cluster and the other reservations (c.mu held). prev, when set, is the
// reservation being updated: its devices are kept unless what it holds
// changed.
func (c *Controller) placeLocked(in resvInput, prev *reservation, keepSlices bool, now time.Time) (core.Reservation, error) {
	if len(in.users) == 0 && len(in.accounts) == 0 {
		return core.Reservation{}, status.Errorf(codes.InvalidArgument, "reservation %s: Users= or Accounts= is required", in.name)
	}
	if !in.end.IsZero() && !in.end.After(in.start) {
		return core.Reservation{}, status.Errorf(codes.InvalidArgument, "reservation %s: EndTime %s is not after StartTime %s",
			in.name, in.end.UTC().Format(time.RFC3339), in.start.UTC().Format(time.RFC3339))
	}
	snap := c.snapshotLocked(now)
	snap.Reservations = slices.DeleteFunc(snap.Reservations, func(r core.Reservation) bool { return r.Name == in.name })
	r := core.Reservation{Name: in.name, Start: in.start, End: in.end, Users: in.users, Accounts: in.accounts, Flags: in.flags}
	var err error
	switch {
	case in.tres == nil:
		r.Nodes = in.nodes
		check := r
		check.Nodes = registered(snap, r.Nodes)
		if len(check.Nodes) > 0 {
			err = core.CheckReservation(snap, check)
		}
	case keepSlices && prev != nil:
		r.Nodes, r.Slices = prev.core.Nodes, prev.core.Slices
		err = core.CheckReservation(snap, r)
	default:
		r, err = core.PlaceReservation(snap, core.ResvRequest{Name: in.name, Start: in.start, End: in.end, Users: in.users,
			Accounts: in.accounts, Flags: in.flags, Partition: in.partition, TRES: in.tres})
	}
	if err != nil {
		return r, status.Errorf(codes.InvalidArgument, "%v", err)
	}
	return r, nil
}

// registered keeps the names the snapshot knows (nodes that reported
// their shape); a reservation may name the others, which the core skips.
func registered(snap core.Snapshot, names []string) []string {
	var out []string
	for _, n := range names {
		if slices.ContainsFunc(snap.Nodes, func(x core.Node) bool { return x.Name == n }) {
			out = append(out, n)
		}
	}
	return out
}

// coreReservationsLocked is the scheduler's reservation input: every
// reservation that has not ended, its nodes narrowed to usable ones.
func (c *Controller) coreReservationsLocked(now time.Time, usable map[string]bool) []core.Reservation {
	var out []core.Reservation
	for _, name := range sortedKeys(c.st.resv) {
		r := c.st.resv[name].core
		if !r.End.IsZero() && !r.End.After(now) {
			continue
		}
		if slices.ContainsFunc(r.Nodes, func(n string) bool { return !usable[n] }) {
			r.Nodes = slices.DeleteFunc(slices.Clone(r.Nodes), func(n string) bool { return !usable[n] })
		}
		if slices.ContainsFunc(r.Slices, func(s core.ResvSlice) bool { return !usable[s.Node] }) {
			r.Slices = slices.DeleteFunc(slices.Clone(r.Slices), func(s core.ResvSlice) bool { return !usable[s.Node] })
		}
		out = append(out, r)
	}
	return out
}

// purgeReservationsLocked deletes reservations past their end, as Slurm
// does (c.mu held).
func (c *Controller) purgeReservationsLocked(now time.Time) []write {
	var ws []write
	for _, name := range sortedKeys(c.st.resv) {
		r := c.st.resv[name]
		if r.core.End.IsZero() || r.core.End.After(now) {
			continue
		}
		delete(c.st.resv, name)
		ws = append(ws, write{bucket: bucketReservations, key: []byte(name)})
		ws = append(ws, c.record(&pb.Event{Kind: EventReservation, Actor: "controller", Reason: "ended",
			Detail: "reservation " + name + " ended and was deleted", Fields: map[string]string{"reservation": name, "action": "delete"}})...)
	}
	return ws
}

func (c *Controller) resvProto(r *reservation, now time.Time) *pb.Reservation {
	p := &pb.Reservation{Name: r.core.Name, StartTime: api.Timestamp(r.core.Start), Nodes: r.core.Nodes, Users: r.core.Users,
		Accounts: r.core.Accounts, Tres: r.tres, Partition: r.partition, CreatedBy: r.createdBy, Created: api.Timestamp(r.created), State: "INACTIVE"}
	if !r.core.End.IsZero() {
		p.EndTime = api.Timestamp(r.core.End)
	}
	if f := r.core.Flags.String(); f != "" {
		p.Flags = strings.Split(f, ",")
	}
	for _, s := range r.core.Slices {
		p.Slices = append(p.Slices, &pb.ReservationSlice{Node: s.Node, Devices: s.Devices, Cpus: int32(s.CPUs), MemoryMb: s.MemoryMB})
	}
	if !now.Before(r.core.Start) && (r.core.End.IsZero() || now.Before(r.core.End)) {
		p.State = "ACTIVE"
	}
	return p
}

// resvRecord is the durable form of a reservation.
type resvRecord struct {
	Name      string        `json:"name"`
	Start     time.Time     `json:"start"`
	End       time.Time     `json:"end,omitzero"`
	Nodes     []string      `json:"nodes,omitempty"`
	Users     []string      `json:"users,omitempty"`
	Accounts  []string      `json:"accounts,omitempty"`
	Flags     string        `json:"flags,omitempty"`
	Slices    []sliceRecord `json:"slices,omitempty"`
	TRES      string        `json:"tres,omitempty"`
	Partition string        `json:"partition,omitempty"`
	CreatedBy string        `json:"createdBy,omitempty"`
	Created   time.Time     `json:"created,omitzero"`
}

type sliceRecord struct {
	Node     string   `json:"node"`
	Devices  []string `json:"devices,omitempty"`
	CPUs     int      `json:"cpus,omitempty"`
	MemoryMB int64    `json:"memoryMB,omitempty"`
}

func (r *reservation) write() (write, error) {
	rec := resvRecord{Name: r.core.Name, Start: r.core.Start, End: r.core.End, Nodes: r.core.Nodes, Users: r.core.Users,
		Accounts: r.core.Accounts, Flags: r.core.Flags.String(), TRES: r.tres, Partition: r.partition, CreatedBy: r.createdBy, Created: r.created}
	for _, s := range r.core.Slices {
		rec.Slices = append(rec.Slices, sliceRecord{Node: s.Node, Devices: s.Devices, CPUs: s.CPUs, MemoryMB: s.MemoryMB})
	}
	b, err := json.Marshal(rec)
	if err != nil {
		return write{}, fmt.Errorf("controller: encode reservation %s: %w", r.core.Name, err)
	}
	return write{bucket: bucketReservations, key: []byte(r.core.Name), val: b}, nil
}

func reservationFromRecord(v []byte) (*reservation, error) {
	var rec resvRecord
	if err := json.Unmarshal(v, &rec); err != nil {
		return nil, err
	}
	flags, err := core.ParseResvFlags(rec.Flags)
	if err != nil {
		return nil, err
	}
	r := &reservation{core: core.Reservation{Name: rec.Name, Start: rec.Start, End: rec.End, Nodes: rec.Nodes, Users: rec.Users,
		Accounts: rec.Accounts, Flags: flags}, tres: rec.TRES, partition: rec.Partition, createdBy: rec.CreatedBy, created: rec.Created}
	for _, s := range rec.Slices {
		r.core.Slices = append(r.core.Slices, core.ResvSlice{Node: s.Node, Devices: s.Devices, CPUs: s.CPUs, MemoryMB: s.MemoryMB})
	}
	return r, nil
}
