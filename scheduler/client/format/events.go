package format

import (
	"cmp"
	"io"
	"strconv"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/jobspec"
)

// EventsLayout is parity events' default layout: time, sequence, kind,
// job, node(s), actor, and the reason with its detail.
const EventsLayout = "%19T %.6s %#k %.7j %#n %#a %r"

// ParseEventsFormat reads an events layout (codes T s k j n a r d v p).
func ParseEventsFormat(spec string) (Layout, error) {
	return ParseLayout(spec, knownIn(eventColumns(Env{})))
}

// Events writes decision log entries through a layout, in the order given.
func Events(w io.Writer, evs []*pb.Event, l Layout, e Env, noHeader bool) error {
	return table(w, l, eventColumns(e), evs, !noHeader)
}

func eventColumns(e Env) map[byte]column[*pb.Event] {
	dash := func(s string) string { return cmp.Or(s, "-") }
	return map[byte]column[*pb.Event]{
		'T': {"TIME", func(ev *pb.Event) string { return Stamp(ev.GetTime(), e.loc(), "Unknown") }},
		's': {"SEQ", func(ev *pb.Event) string { return strconv.FormatUint(ev.GetSeq(), 10) }},
		'k': {"KIND", func(ev *pb.Event) string { return ev.GetKind() }},
		'j': {"JOBID", func(ev *pb.Event) string {
			if ev.GetJobId() == 0 {
				return "-"
			}
			return strconv.FormatUint(ev.GetJobId(), 10)
		}},
		'n': {"NODES", func(ev *pb.Event) string {
			if len(ev.GetNodes()) > 0 {
				return jobspec.CompressHostlist(ev.GetNodes())
			}
			return dash(ev.GetNode())
		}},
		'a': {"ACTOR", func(ev *pb.Event) string { return dash(ev.GetActor()) }},
		'r': {"REASON", func(ev *pb.Event) string {
			switch {
			case ev.GetDetail() == "":
				return ev.GetReason()
			case ev.GetReason() == "":
				return ev.GetDetail()
			}
			return ev.GetReason() + ": " + ev.GetDetail()
		}},
		'd': {"DETAIL", func(ev *pb.Event) string { return ev.GetDetail() }},
		'v': {"VERDICT", func(ev *pb.Event) string { return dash(ev.GetVerdict()) }},
		'p': {"ALTERNATIVES", func(ev *pb.Event) string { return dash(jobspec.CompressHostlist(ev.GetAlternatives())) }},
	}
}
