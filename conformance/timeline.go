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
	index := map[string]string{} // GPU UUID → local index, as the series label GPUs
	if nodes, err := cl.ListNodes(ctx, nil); err == nil {
		for _, n := range nodes {
			for _, g := range n.GetGpus() {
				index[g.GetUuid()] = strconv.Itoa(int(g.GetIndex()))
			}
		}
	}
	return convertEvents(evs, index)
}

// convertEvents is the pure part of controllerTimeline; index maps GPU
// UUIDs to the labels the GPU series use.
func convertEvents(evs []*pb.Event, index map[string]string) []reports.Event {
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
		gpu := gpuLabels(ev.GetFields()["devices"], index)
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

// gpuLabels rewrites a comma-separated UUID list with index labels where known.
func gpuLabels(uuids string, index map[string]string) string {
	if uuids == "" {
		return ""
	}
	parts := strings.Split(uuids, ",")
	for i, u := range parts {
		if l, ok := index[u]; ok {
			parts[i] = l
		}
	}
	return strings.Join(parts, ",")
}
