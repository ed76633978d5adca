package controller

import (
	"testing"

	"google.golang.org/protobuf/encoding/protojson"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
)

// TestHTTPDecodeErrorsNameTheField: protojson's errors say where and what
// type, not which field; the answer names it.
func TestHTTPDecodeErrorsNameTheField(t *testing.T) {
	cases := []struct{ body, want string }{
		{`{"spec":{"script":"#!/bin/sh\ntrue\n","begin":"10000-01-01T00:00:00Z"}}`, "begin"},
		{"{\"spec\":{\n  \"script\": \"x\",\n  \"nice\": \"abc\"}}", "nice"},
		{`{"spec":{"memPerCpuMb":"99999999999999999999"}}`, "memPerCpuMb"},
	}
	for _, c := range cases {
		err := protojson.Unmarshal([]byte(c.body), &pb.SubmitRequest{})
		if err == nil {
			t.Fatalf("%s decoded", c.body)
		}
		if got := jsonFieldAt([]byte(c.body), err); got != c.want {
			t.Errorf("field of %v in %s = %q, want %q", err, c.body, got, c.want)
		}
	}
	if got := lastKeyBefore([]byte(`{"a`)); got != "" {
		t.Errorf("no key: %q", got)
	}
}
