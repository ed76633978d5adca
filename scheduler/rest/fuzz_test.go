package rest

import (
	"net/http/httptest"
	"strings"
	"testing"
	"unicode/utf8"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// refusal checks that a decoder's error is a clear refusal: a status of
// a client-error code with a message.
func refusal(t *testing.T, err error) {
	t.Helper()
	st, ok := status.FromError(err)
	if !ok || st.Message() == "" || (st.Code() != codes.InvalidArgument && st.Code() != codes.Unimplemented) {
		t.Fatalf("decoder error %v (%T) is not an InvalidArgument status with a message", err, err)
	}
}

// FuzzDecodeSubmit feeds job/submit bodies through the whole decoding: the
// request, the job description and the JobSpec it becomes.
func FuzzDecodeSubmit(f *testing.F) {
	for _, s := range []string{
		`{"script":"#!/bin/sh\n","job":{"name":"a","tasks":2,"time_limit":{"set":true,"number":5},"tres_per_node":"gres/gpu:h100:1"}}`,
		`{"job":{"script":"x","environment":["A=1"],"nodes":"1-2","memory_per_node":0,"begin_time":{"set":true,"number":1}}}`,
		`{"job":{"flags":["KILL_INVALID_DEPENDENCY"],"shared":["none"],"licenses":"x"}}`,
		`{"jobs":[{}]}`, `{"job":null}`, `{"job":{"time_limit":{"infinite":true}}}`, `[`, `{"job":{"x":1}}`, "\xff",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		c := &call{r: httptest.NewRequest("POST", "/slurm/v0.0.44/job/submit", nil), w: httptest.NewRecorder()}
		var req submitReq
		if err := decodeObject(c, body, "job_submit_req", submitReqProps(), &req, true); err != nil {
			refusal(t, err)
			return
		}
		if len(req.Job) == 0 {
			return
		}
		var d jobDesc
		if err := decodeObject(c, req.Job, "job", jobDescProps(), &d, false); err != nil {
			refusal(t, err)
			return
		}
		spec, err := d.spec(deref(req.Script))
		if err != nil {
			refusal(t, err)
			return
		}
		if spec.GetScript() == "" {
			t.Fatalf("a spec without a script was accepted from %q", body)
		}
		if !utf8.Valid(body) {
			t.Fatalf("invalid UTF-8 accepted: %q", body)
		}
		for _, w := range c.warnings {
			if !strings.HasPrefix(w.Source, "job.") {
				t.Fatalf("warning %+v does not name the property", w)
			}
		}
	})
}

// FuzzDecodeUpdates feeds job and node update bodies through their decoders.
func FuzzDecodeUpdates(f *testing.F) {
	for _, s := range []string{`{"name":"x","hold":true}`, `{"time_limit":5}`, `{"state":["DRAIN"],"reason":"r"}`, `{"priority":1}`, `{`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		c := &call{r: httptest.NewRequest("POST", "/", nil), w: httptest.NewRecorder()}
		var u jobUpdate
		if err := decodeObject(c, body, "job", jobDescProps(), &u, true); err != nil {
			refusal(t, err)
		} else if u.TimeLimit != nil {
			if _, err := minutes("job.time_limit", u.TimeLimit, -1); err != nil {
				refusal(t, err)
			}
		}
		var n nodeUpdate
		if err := decodeObject(c, body, "update_node_msg", updateNodeProps(), &n, true); err != nil {
			refusal(t, err)
		}
	})
}

// FuzzParameters feeds path and query values through their parsers.
func FuzzParameters(f *testing.F) {
	for _, s := range []string{"42", "42_3", "0", "abc", "1_", "_1", "4294967296", "KILL", "SIGTERM", "15", "1-4"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		if id, task, err := jobRef(v); err != nil {
			refusal(t, err)
		} else if id == 0 || (task != nil && *task < 0) {
			t.Fatalf("jobRef(%q) = %d, %v", v, id, task)
		}
		if lo, hi, err := nodeRange(v); err != nil {
			refusal(t, err)
		} else if lo < 0 || hi < lo {
			t.Fatalf("nodeRange(%q) = %d-%d", v, lo, hi)
		}
		if n, ok := signalNumber(v); ok && (n <= 0 || n > 64) {
			t.Fatalf("signalNumber(%q) = %d", v, n)
		}
		if _, err := gresTerms("f", v); err != nil {
			refusal(t, err)
		}
	})
}
