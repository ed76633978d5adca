package rest

import (
	"encoding/json"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"google.golang.org/grpc/status"
)

// refusedInEnvelope checks a decoder's refusal (refusal) names where in
// the body it is (the schema's name, what) and answers as the spec's
// error envelope: meta, warnings, and one error whose description is
// the message.
func refusedInEnvelope(t *testing.T, err error, body []byte, what ...string) {
	t.Helper()
	refusal(t, err)
	msg := status.Convert(err).Message()
	named := false
	for _, w := range what {
		named = named || strings.Contains(msg, w)
	}
	if !named {
		t.Fatalf("refusal %q of %q names none of %q", msg, body, what)
	}
	h := &Handler{b: Backend{ClusterName: "lab", Version: "test"}}
	rec := httptest.NewRecorder()
	c := &call{r: httptest.NewRequest("POST", "/slurm/v0.0.44/", nil), w: rec, op: &operation{method: "POST", path: "/slurm/v0.0.44/"}}
	h.writeError(c, none(), err)
	var env struct {
		Meta     map[string]any   `json:"meta"`
		Errors   []apiErr         `json:"errors"`
		Warnings []map[string]any `json:"warnings"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &env); err != nil || env.Meta == nil || env.Warnings == nil ||
		len(env.Errors) != 1 || env.Errors[0].Description != msg || rec.Code != 400 && rec.Code != 501 {
		t.Fatalf("refusal answered %d %s (%v)", rec.Code, rec.Body, err)
	}
}

func fuzzCall(path string) *call {
	return &call{r: httptest.NewRequest("POST", path, nil), w: httptest.NewRecorder()}
}

// FuzzDecodeNodesUpdate: POST nodes/ bodies become one Nodes.Update with
// nodes and one state, or a refusal naming update_node_msg.
func FuzzDecodeNodesUpdate(f *testing.F) {
	for _, s := range []string{`{"name":["n[1-2]"],"state":["DRAIN"],"reason":"fan"}`, `{"name":["n1","n2"],"state":["RESUME"]}`,
		`{"name":[],"state":["DRAIN"]}`, `{"name":"n1","state":["DOWN"]}`, `{"name":["n1"],"state":["DRAIN","IDLE"]}`,
		`{"name":["n1"],"state":["DRAIN"],"weight":1}`, `{"name":["n1"],"state":[1]}`, `{`, "\xff", ``} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		req, err := decodeNodesUpdate(fuzzCall("/slurm/v0.0.44/nodes/"), body)
		if err != nil {
			refusedInEnvelope(t, err, body, "update_node_msg")
			return
		}
		if strings.TrimSpace(req.GetNodes()) == "" || strings.TrimSpace(req.GetState()) == "" {
			t.Fatalf("accepted %q as %v", body, req)
		}
	})
}

// FuzzDecodeReservationsMod: POST reservations/ bodies become a change
// per description (an update of one that exists, with the fields given;
// a creation with a start otherwise), or a refusal naming the entry.
func FuzzDecodeReservationsMod(f *testing.F) {
	for _, s := range []string{
		`{"reservations":[{"name":"maint","start_time":{"set":true,"number":4102444800},"duration":{"set":true,"number":60},"node_list":["n1"]}]}`,
		`{"reservations":[{"name":"old","users":["alice"]},{"name":"new","start_time":1,"node_count":1}]}`,
		`{"reservations":[{"name":"old"}]}`, `{"reservations":[]}`, `{"reservations":[{}]}`, `{"reservations":{}}`,
		`{"reservations":[{"name":"x","colour":1}]}`, `{"reservation":[]}`, `[`, "\xff",
	} {
		f.Add([]byte(s))
	}
	// A name of even length is one that exists.
	exists := func(name string) (bool, error) { return len(name)%2 == 0, nil }
	f.Fuzz(func(t *testing.T, body []byte) {
		c := fuzzCall("/slurm/v0.0.44/reservations/")
		var req resvModReq
		if err := decodeObject(c, body, "reservation_mod_req", setOf("reservations"), &req, true); err != nil {
			refusedInEnvelope(t, err, body, "reservation_mod_req")
			return
		}
		for i, raw := range req.Reservations {
			ch, err := resvChangeOf(c, "reservation_mod_req.reservations["+strconv.Itoa(i)+"]", raw, exists)
			if err != nil {
				refusedInEnvelope(t, err, body, "reservation_mod_req.reservations["+strconv.Itoa(i)+"]")
				return
			}
			if ch.update != nil && len(ch.update) == 0 || ch.update == nil && ch.spec.GetStartTime().GetSeconds() <= 0 {
				t.Fatalf("entry %d of %q accepted as %+v", i, body, ch)
			}
		}
	})
}

// FuzzDecodeAllocate: job/allocate bodies become an interactive job spec
// or a refusal naming job_alloc_req or the job property.
func FuzzDecodeAllocate(f *testing.F) {
	for _, s := range []string{`{"job":{"partition":"gpu","tasks":1,"time_limit":{"set":true,"number":10},"tres_per_node":"gres/gpu:1"}}`,
		`{"job":{}}`, `{"job":null}`, `{"hetjob":[{}]}`, `{"job":{"script":"x"}}`, `{"job":{"tasks":"two"}}`, `{"jobs":{}}`, `{`, "\xff"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		spec, err := decodeAllocate(fuzzCall("/slurm/v0.0.44/job/allocate"), body)
		if err != nil {
			refusedInEnvelope(t, err, body, "job_alloc_req", "job")
			return
		}
		if !spec.GetInteractive() || spec.GetScript() == "" {
			t.Fatalf("accepted %q as a job that is not interactive or has no script: %v", body, spec)
		}
	})
}

// FuzzDecodeKillJobs: DELETE jobs/ bodies select jobs by reference or
// filter with a known signal, or are refused naming kill_jobs_msg.
func FuzzDecodeKillJobs(f *testing.F) {
	for _, s := range []string{`{"jobs":["1","2_3"]}`, `{"user_name":"alice","signal":"TERM"}`, `{"job_state":["PENDING"],"flags":["FULL_JOB"]}`,
		`{}`, `{"jobs":["x"]}`, `{"jobs":[1]}`, `{"signal":"NOPE","jobs":["1"]}`, `{"flags":["HURRY"],"jobs":["1"]}`, `{"qos":"high"}`, `{`, "\xff"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		m, sig, err := decodeKillJobs(fuzzCall("/slurm/v0.0.44/jobs/"), body)
		if err != nil {
			refusedInEnvelope(t, err, body, "kill_jobs_msg")
			return
		}
		if len(m.Jobs) == 0 && !m.filtered() || sig < 0 || sig > 64 {
			t.Fatalf("accepted %q selecting nothing or with signal %d", body, sig)
		}
		for _, v := range m.Jobs {
			if _, _, err := jobRef(v); err != nil {
				t.Fatalf("accepted job reference %q", v)
			}
		}
	})
}
