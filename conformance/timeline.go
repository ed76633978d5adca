package conformance

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/parityhpc/parity/reports"
	"github.com/parityhpc/parity/scheduler/api"
	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/client"
)

// eventKinds maps decision-log kinds to timeline kinds; others are left out.
var eventKinds = map[string]string{
	"start":     reports.EventJobStart,
	"end":       reports.EventJobEnd,
	"drain":     reports.EventDrain,
	"resume":    reports.EventResume,
	"requeue":   reports.EventRequeue,
	"reclaim":   reports.EventReclaim,
	"node_fail": reports.EventNote,
	"down":      reports.EventNote,
}

// controllerTimeline reads the decision log since the run started and
// turns it into timeline events: job bars, drains, resumes, requeues.
func controllerTimeline(ctx context.Context, cl *client.Client, since time.Time) []reports.Event {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	evs, err := cl.Events(ctx, &pb.EventsRequest{Since: api.Timestamp(since)})
	if err != nil {
		return []reports.Event{{Time: time.Now(), Kind: reports.EventNote, Text: "decision log unavailable: " + client.Message(err)}}
	}
	return convertEvents(evs)
}

// convertEvents is the pure part of controllerTimeline.
func convertEvents(evs []*pb.Event) []reports.Event {
	var out []reports.Event
	for _, ev := range evs {
		kind, ok := eventKinds[ev.GetKind()]
		if !ok {
			continue
		}
		node := ev.GetNode()
		nodes := ev.GetNodes()
		if len(nodes) == 0 && node != "" {
			nodes = []string{node}
		}
		if len(nodes) == 0 {
			nodes = []string{""}
		}
		text := ev.GetReason()
		if ev.GetDetail() != "" {
			text = strings.TrimSpace(text + " " + ev.GetDetail())
		}
		if kind == reports.EventNote {
			text = strings.TrimSpace(ev.GetKind() + ": " + text)
		}
		job := ""
		if ev.GetJobId() != 0 {
			job = strconv.FormatUint(ev.GetJobId(), 10)
		}
		gpu := ev.GetFields()["devices"]
		// A multi-node job is a bar on each of its nodes; a requeue also
		// ends the run's bar.
		for _, n := range nodes {
			at := api.Time(ev.GetTime())
			if kind == reports.EventRequeue && job != "" {
				out = append(out, reports.Event{Time: at, Node: n, Job: job, Kind: reports.EventJobEnd, Text: "requeued"})
			}
			out = append(out, reports.Event{Time: at, Node: n, GPU: gpu, Job: job, Kind: kind, Text: text})
		}
	}
	return out
}
