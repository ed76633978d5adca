package reports

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestJSONRoundTrip(t *testing.T) {
	want := sampleRun()
	var b bytes.Buffer
	if err := WriteJSON(&b, want); err != nil {
		t.Fatal(err)
	}
	got, err := ReadJSON(&b)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("round trip changed the run:\n got %+v\nwant %+v", got, want)
	}
	// And the round-tripped run renders to the same bytes.
	var again bytes.Buffer
	if err := WriteJSON(&again, got); err != nil {
		t.Fatal(err)
	}
	var first bytes.Buffer
	if err := WriteJSON(&first, want); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(first.Bytes(), again.Bytes()) {
		t.Error("writing a read run gives different JSON")
	}
}

func TestJSONSchemaFields(t *testing.T) {
	var b bytes.Buffer
	if err := WriteJSON(&b, sampleRun()); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(b.String(), "{\n  \"schemaVersion\": 1,") {
		t.Errorf("schemaVersion is not the first field: %.60q", b.String())
	}
	// The names SCHEMA.md documents, as tools see them.
	var doc struct {
		SchemaVersion int `json:"schemaVersion"`
		Specs         []struct {
			ID         string `json:"id"`
			Status     string `json:"status"`
			DurationNs int64  `json:"durationNs"`
			Vendor     string `json:"vendor"`
		} `json:"specs"`
		Series []struct {
			Samples []struct {
				Missing []string `json:"missing"`
			} `json:"samples"`
		} `json:"series"`
	}
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.SchemaVersion != SchemaVersion || len(doc.Specs) == 0 {
		t.Fatalf("schemaVersion %d, %d specs", doc.SchemaVersion, len(doc.Specs))
	}
	first := doc.Specs[0]
	if first.ID == "" || first.Status == "" || first.Vendor == "" || first.DurationNs != (2100*time.Millisecond).Nanoseconds() {
		t.Errorf("first spec as a tool reads it: %+v", first)
	}
	if got := doc.Series[2].Samples[4].Missing; len(got) != 1 || got[0] != FieldUtilization {
		t.Errorf("missing fields of a gap sample = %v", got)
	}
}

func TestReadJSONRejects(t *testing.T) {
	valid := func() map[string]any {
		var b bytes.Buffer
		if err := WriteJSON(&b, sampleRun()); err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(b.Bytes(), &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	tests := []struct {
		name   string
		mutate func(map[string]any)
		want   error
		msg    string
	}{
		{"future schema", func(m map[string]any) { m["schemaVersion"] = 2 }, ErrSchema, "schemaVersion 2"},
		{"no schema", func(m map[string]any) { delete(m, "schemaVersion") }, ErrSchema, "schemaVersion 0"},
		{"skip without reason", func(m map[string]any) {
			for _, s := range m["specs"].([]any) {
				if spec := s.(map[string]any); spec["status"] == "skipped" {
					delete(spec, "reason")
				}
			}
		}, ErrInvalid, "skipped without a reason"},
		{"unknown status", func(m map[string]any) {
			m["specs"].([]any)[0].(map[string]any)["status"] = "flaky"
		}, ErrInvalid, `status "flaky"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := valid()
			tt.mutate(m)
			data, err := json.Marshal(m)
			if err != nil {
				t.Fatal(err)
			}
			_, err = ReadJSON(bytes.NewReader(data))
			if !errors.Is(err, tt.want) || !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("err = %v, want %v mentioning %q", err, tt.want, tt.msg)
			}
		})
	}
	if _, err := ReadJSON(strings.NewReader("{not json")); err == nil || errors.Is(err, ErrInvalid) {
		t.Errorf("malformed JSON: err = %v", err)
	}
	// Fields a newer writer adds are tolerated.
	m := valid()
	m["futureField"] = "x"
	data, _ := json.Marshal(m)
	if _, err := ReadJSON(bytes.NewReader(data)); err != nil {
		t.Errorf("unknown field rejected: %v", err)
	}
}
