package rest

import (
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"
)

// FuzzDecodeReservation feeds POST reservation bodies through the
// decoder and into the ReservationSpec: each is refused with a status
// naming what is wrong, or becomes a spec with a start.
func FuzzDecodeReservation(f *testing.F) {
	for _, s := range []string{
		`{"name":"r","start_time":{"set":true,"number":4102444800},"duration":{"set":true,"number":60},"node_list":["n[1-2]"],"users":["a"]}`,
		`{"start_time":1,"tres":[{"type":"gres","name":"gpu","count":2}],"node_count":3,"accounts":["x"]}`,
		`{"start_time":{"set":true,"number":1},"duration":{"infinite":true},"flags":["MAINT"]}`,
		`{"core_count":1}`, `{"users":"a,b"}`, `{"tres":[{"count":-1}]}`, `[`, "\xff",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		c := &call{r: httptest.NewRequest("POST", "/slurm/v0.0.44/reservation", nil), w: httptest.NewRecorder()}
		var d resvDesc
		if err := decodeObject(c, body, "reservation_desc_msg", resvDescProps(), &d, true); err != nil {
			refusal(t, err)
			return
		}
		spec, err := d.spec()
		if err != nil {
			refusal(t, err)
			return
		}
		if spec.GetStartTime().GetSeconds() <= 0 || spec.GetDurationSeconds() < -1 {
			t.Fatalf("accepted a spec without a start or with a negative duration from %q: %v", body, spec)
		}
	})
}

// FuzzSlurmDBJobsQuery feeds query strings through the ledger filter:
// each is refused with a status or becomes a filter.
func FuzzSlurmDBJobsQuery(f *testing.F) {
	for _, s := range []string{"users=a,b&account=x", "state=CD,f,OUT_OF_MEMORY", "start_time=1700000000&end_time=now",
		"start_time=2026-11-01T08:00", "node=n1", "cluster=lab", "state=", "start_time=-5", "skip_steps=true"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, query string) {
		if _, err := url.ParseQuery(query); err != nil {
			return
		}
		h := &Handler{b: Backend{ClusterName: "lab", Now: func() time.Time { return time.Unix(1_800_000_000, 0) }}}
		r := httptest.NewRequest("GET", "/slurmdb/v0.0.44/jobs/", nil)
		r.URL.RawQuery = query
		c := &call{r: r, w: httptest.NewRecorder()}
		flt, err := h.dbJobsFilter(c)
		if err != nil {
			refusal(t, err)
			return
		}
		for _, s := range flt.GetStates() {
			if !jobStateOK(s) || strings.TrimSpace(s) == "" {
				t.Fatalf("state %q accepted from %q", s, query)
			}
		}
	})
}
