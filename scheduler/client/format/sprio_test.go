package format

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
)

func testPriority() *pb.PriorityResponse {
	return &pb.PriorityResponse{
		Weights: &pb.PriorityWeights{Age: 1000, Fairshare: 10000, Qos: 2000, Tres: map[string]float64{"gres/gpu": 500}},
		Jobs: []*pb.JobPriority{
			{JobId: 12, Partition: "gpu", User: "alice", Factors: &pb.PriorityFactors{Total: 6401.6, Age: 0.25, Fairshare: 0.5, Qos: 0.5,
				WeightedAge: 250, WeightedFairshare: 5000, WeightedQos: 1000, Tres: map[string]float64{"gres/gpu": 0.3}, WeightedTres: 150, Nice: 5}},
		},
	}
}

func TestSprio(t *testing.T) {
	cases := []struct {
		o            SprioOptions
		header, row  string
		weightsTitle bool
	}{
		// Slurm 22.05 (the anchor): SITE always, the short form only the
		// factors weighted, -l every factor.
		{SprioOptions{}, "JOBID PARTITION PRIORITY SITE AGE FAIRSHARE QOS TRES", "12 gpu 6402 0 250 5000 1000 gres/gpu=150", false},
		{SprioOptions{Long: true}, "JOBID PARTITION USER PRIORITY SITE AGE ASSOC FAIRSHARE JOBSIZE PARTITION QOS NICE TRES",
			"12 gpu alice 6402 0 250 0 5000 0 0 1000 5 gres/gpu=150", false},
		{SprioOptions{Normalized: true}, "JOBID PARTITION PRIORITY SITE AGE FAIRSHARE QOS TRES", "12 gpu 0.0000015 0 0.2500000 0.5000000 0.5000000 gres/gpu=0.30", false},
		{SprioOptions{Format: "%i|%u|%Y|%N"}, "JOBID|USER|PRIORITY|NICE", "12|alice|6402|5", false},
	}
	for _, c := range cases {
		var b strings.Builder
		if err := Sprio(&b, testPriority(), c.o); err != nil {
			t.Fatal(err)
		}
		out := lines(b.String())
		mustEqual(t, "header", strings.Join(cells(out[0]), " "), c.header)
		mustEqual(t, "row", strings.Join(cells(out[1]), " "), c.row)
	}
	var b strings.Builder
	if err := SprioWeights(&b, testPriority().GetWeights(), SprioOptions{}); err != nil {
		t.Fatal(err)
	}
	out := lines(b.String())
	mustEqual(t, "weights", strings.Join(cells(out[1]), " "), "Weights 1 1000 10000 2000 gres/gpu=500")
	// JOBSIZE and PARTITION have weight 0: no such columns.
	if strings.Contains(out[0], "JOBSIZE") || strings.Count(out[0], "PARTITION") != 1 {
		t.Errorf("zero-weight columns shown: %q", out[0])
	}
}

func TestEvents(t *testing.T) {
	evs := []*pb.Event{
		{Seq: 1, Time: ts(0), Kind: "start", JobId: 7, Nodes: []string{"n001", "n002"}, Actor: "scheduler", Reason: "Priority"},
		{Seq: 2, Time: ts(time.Minute), Kind: "drain", Node: "n003", Actor: "olga", Reason: "bad fan", Detail: "fan 2 stopped"},
	}
	l, err := ParseEventsFormat(EventsLayout)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := Events(&b, evs, l, env, false); err != nil {
		t.Fatal(err)
	}
	out := lines(b.String())
	mustEqual(t, "header", strings.Join(cells(out[0]), " "), "TIME SEQ KIND JOBID NODES ACTOR REASON")
	mustEqual(t, "start", strings.Join(cells(out[1]), " "), "2025-06-02T09:00:00 1 start 7 n[001-002] scheduler Priority")
	mustEqual(t, "drain", strings.Join(cells(out[2]), " "), "2025-06-02T09:01:00 2 drain - n003 olga bad fan: fan 2 stopped")
}

func TestJSONIsStableAndComplete(t *testing.T) {
	jobs := testJobs()
	a, err := Messages(jobs)
	if err != nil {
		t.Fatal(err)
	}
	for range 5 {
		b, _ := Messages(jobs)
		if string(a) != string(b) {
			t.Fatal("JSON differs between runs")
		}
	}
	var decoded []map[string]any
	if err := json.Unmarshal(a, &decoded); err != nil {
		t.Fatal(err)
	}
	// Unset fields are present with zero values, names are lowerCamelCase.
	for _, k := range []string{"id", "state", "reason", "timeLimitSeconds", "batchHost", "alloc", "spec"} {
		if _, ok := decoded[2][k]; !ok {
			t.Errorf("field %q missing from %v", k, decoded[2])
		}
	}
	mustEqual(t, "id", decoded[0]["id"].(string), "12")
	var b strings.Builder
	if err := WriteJSON(&b, map[string]any{"jobs": a}); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(b.String(), "{\n  \"jobs\": [\n    {\n") {
		t.Errorf("not indented: %.60q", b.String())
	}
	empty, _ := Messages([]*pb.Job{})
	mustEqual(t, "empty list", string(empty), "[]")
	if !slices.Contains([]string{"PENDING"}, decoded[0]["state"].(string)) {
		t.Errorf("state = %v", decoded[0]["state"])
	}
}
