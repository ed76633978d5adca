package format

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/jobspec"
)

// ShowReservations writes reservations as scontrol show reservation does.
func ShowReservations(w io.Writer, rs []*pb.Reservation, o ShowOptions) error {
	recs := make([]record, len(rs))
	loc := o.loc()
	for i, r := range rs {
		nodes := ResvNodes(r)
		recs[i] = record{
			{{"ReservationName", r.GetName()}, {"StartTime", Stamp(r.GetStartTime(), loc, "Unknown")},
				{"EndTime", Stamp(r.GetEndTime(), loc, "Unknown")}, {"Duration", ResvDuration(r)}},
			{{"Nodes", orNull(jobspec.CompressHostlist(nodes))}, {"NodeCnt", strconv.Itoa(len(nodes))},
				{"PartitionName", orNull(r.GetPartition())}, {"Flags", orNull(strings.Join(r.GetFlags(), ","))}},
			{{"TRES", orNull(ResvTRES(r))}},
			{{"Users", orNull(strings.Join(r.GetUsers(), ","))}, {"Accounts", orNull(strings.Join(r.GetAccounts(), ","))},
				{"State", r.GetState()}},
		}
	}
	return writeRecords(w, recs, o.OneLiner)
}

// ResvNodes lists the nodes a reservation holds whole or in part.
func ResvNodes(r *pb.Reservation) []string {
	out := append([]string(nil), r.GetNodes()...)
	for _, s := range r.GetSlices() {
		out = append(out, s.GetNode())
	}
	return out
}

// ResvDuration is the window's length (scontrol's Duration=), or
// UNLIMITED without an end.
func ResvDuration(r *pb.Reservation) string {
	if r.GetEndTime() == nil || r.GetStartTime() == nil {
		return "UNLIMITED"
	}
	return Clock(int64(r.GetEndTime().AsTime().Sub(r.GetStartTime().AsTime()).Seconds()))
}

// ResvTRES is what the reservation holds: node=N for whole nodes, the
// slices' sum for a TRES reservation.
func ResvTRES(r *pb.Reservation) string {
	if len(r.GetSlices()) == 0 {
		if len(r.GetNodes()) == 0 {
			return ""
		}
		return "node=" + strconv.Itoa(len(r.GetNodes()))
	}
	var gpus, cpus int
	var mem int64
	for _, s := range r.GetSlices() {
		gpus += len(s.GetDevices())
		cpus += int(s.GetCpus())
		mem += s.GetMemoryMb()
	}
	var parts []string
	if cpus > 0 {
		parts = append(parts, "cpu="+strconv.Itoa(cpus))
	}
	if mem > 0 {
		parts = append(parts, fmt.Sprintf("mem=%dM", mem))
	}
	if gpus > 0 {
		parts = append(parts, "gres/gpu="+strconv.Itoa(gpus))
	}
	return strings.Join(parts, ",")
}

// ReservationTable writes sinfo -T: name, state, start, end, duration
// and nodes, one reservation a line.
func ReservationTable(w io.Writer, rs []*pb.Reservation, e Env, header bool) error {
	var b strings.Builder
	const row = "%14s %8s  %19s  %19s  %11s  %s\n"
	if header {
		fmt.Fprintf(&b, row, "RESV_NAME", "STATE", "START_TIME", "END_TIME", "DURATION", "NODELIST")
	}
	loc := e.loc()
	for _, r := range rs {
		fmt.Fprintf(&b, row, Escape(r.GetName()), Escape(r.GetState()), Stamp(r.GetStartTime(), loc, "Unknown"), Stamp(r.GetEndTime(), loc, "Unknown"),
			ResvDuration(r), Escape(jobspec.CompressHostlist(ResvNodes(r))))
	}
	_, err := io.WriteString(w, b.String())
	return err
}
