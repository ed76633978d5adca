package api

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/parityhpc/parity/scheduler/api/jsonapi"
	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
)

// filledSpec sets every field of a jsonapi.JobSpec to a distinct non-zero
// value, so a field the conversion forgets shows up as a difference.
func filledSpec(t *testing.T) *jsonapi.JobSpec {
	t.Helper()
	var s jsonapi.JobSpec
	v := reflect.ValueOf(&s).Elem()
	at := time.Date(2026, 11, 29, 14, 30, 5, 123456789, time.FixedZone("X", 3600))
	for i := range v.NumField() {
		f := v.Field(i)
		switch f.Kind() {
		case reflect.String:
			f.SetString("v" + v.Type().Field(i).Name)
		case reflect.Int32, reflect.Int64:
			f.SetInt(int64(i + 1))
		case reflect.Bool:
			f.SetBool(true)
		case reflect.Slice:
			f.Set(reflect.ValueOf([]string{"a" + v.Type().Field(i).Name, "b"}))
		case reflect.Map:
			f.Set(reflect.ValueOf(map[string]string{"K": "V", "PATH": "/bin"}))
		case reflect.Pointer:
			switch f.Type().Elem() {
			case reflect.TypeFor[time.Time]():
				ts := at.Add(time.Duration(i) * time.Hour)
				f.Set(reflect.ValueOf(&ts))
			case reflect.TypeFor[jsonapi.GRESRequest]():
				f.Set(reflect.ValueOf(&jsonapi.GRESRequest{
					PerJob:  []jsonapi.GRESTerm{{Name: "gpu", Type: "h100", Count: 8}},
					PerNode: []jsonapi.GRESTerm{{Name: "gpu", Count: 4}, {Name: "nic", Type: "ib", Count: 1}},
					PerTask: []jsonapi.GRESTerm{{Name: "gpu", Type: "a100", Count: 1}},
				}))
			default:
				t.Fatalf("field %s: no filler for %s", v.Type().Field(i).Name, f.Type())
			}
		default:
			t.Fatalf("field %s: no filler for %s", v.Type().Field(i).Name, f.Type())
		}
	}
	return &s
}

// TestJobSpecFromJSONMatchesProtoJSON: what a lean client posts decodes
// (protojson, on the controller) to the same message JobSpecFromJSON
// builds (what the gRPC client sends), for every field.
func TestJobSpecFromJSONMatchesProtoJSON(t *testing.T) {
	s := filledSpec(t)
	body, err := json.Marshal(jsonapi.SubmitRequest{Spec: s, TestOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	var got pb.SubmitRequest
	if err := protojson.Unmarshal(body, &got); err != nil {
		t.Fatalf("protojson refuses the lean body: %v\n%s", err, body)
	}
	want := &pb.SubmitRequest{Spec: JobSpecFromJSON(s), TestOnly: true}
	if !proto.Equal(&got, want) {
		t.Fatalf("protojson decoded\n%v\nJobSpecFromJSON built\n%v", &got, want)
	}
	if got.GetSpec().GetBegin().AsTime().Nanosecond() != 123456789 {
		t.Errorf("begin lost its nanoseconds: %v", got.GetSpec().GetBegin().AsTime())
	}
}

// TestJSONStructsCoverMessages: every field of the messages has its
// counterpart (same JSON name) in the plain structs, so a field added to
// the proto cannot be silently dropped by lean clients.
func TestJSONStructsCoverMessages(t *testing.T) {
	cases := []struct {
		msg proto.Message
		typ reflect.Type
	}{
		{&pb.JobSpec{}, reflect.TypeFor[jsonapi.JobSpec]()},
		{&pb.GRESRequest{}, reflect.TypeFor[jsonapi.GRESRequest]()},
		{&pb.GRESTerm{}, reflect.TypeFor[jsonapi.GRESTerm]()},
		{&pb.SubmitRequest{}, reflect.TypeFor[jsonapi.SubmitRequest]()},
		{&pb.SubmitResponse{}, reflect.TypeFor[jsonapi.SubmitResponse]()},
	}
	for _, c := range cases {
		names := map[string]bool{}
		for i := range c.typ.NumField() {
			name, _, _ := strings.Cut(c.typ.Field(i).Tag.Get("json"), ",")
			names[name] = true
		}
		fields := c.msg.ProtoReflect().Descriptor().Fields()
		for i := range fields.Len() {
			if f := fields.Get(i); !names[f.JSONName()] {
				t.Errorf("%s.%s (json %q) has no field in %s", c.msg.ProtoReflect().Descriptor().Name(), f.Name(), f.JSONName(), c.typ)
			}
		}
		if len(names) != fields.Len() {
			t.Errorf("%s has %d fields, %s %d", c.msg.ProtoReflect().Descriptor().Name(), fields.Len(), c.typ, len(names))
		}
	}
}

// TestSubmitResponseDecodes: the controller's answer (protojson, every
// field present) decodes into the plain struct.
func TestSubmitResponseDecodes(t *testing.T) {
	at := time.Date(2026, 11, 29, 15, 0, 0, 0, time.UTC)
	cases := []struct {
		name string
		msg  *pb.SubmitResponse
		want jsonapi.SubmitResponse
	}{
		{"submitted", &pb.SubmitResponse{JobId: 1 << 40, Message: "Submitted batch job 1099511627776"},
			jsonapi.SubmitResponse{JobID: 1 << 40, Message: "Submitted batch job 1099511627776"}},
		{"test only", &pb.SubmitResponse{JobId: 7, Message: "Job 7 to start at 2026-11-29T15:00:00Z", ExpectedStart: timestamppb.New(at),
			Nodes: []string{"gpu1", "gpu2"}, Partition: "gpu", Cpus: 4},
			jsonapi.SubmitResponse{JobID: 7, Message: "Job 7 to start at 2026-11-29T15:00:00Z", ExpectedStart: &at,
				Nodes: []string{"gpu1", "gpu2"}, Partition: "gpu", CPUs: 4}},
		{"test only, start unknown", &pb.SubmitResponse{JobId: 8, Partition: "gpu", PendingReason: "Resources: needs 4 node(s)"},
			jsonapi.SubmitResponse{JobID: 8, Partition: "gpu", PendingReason: "Resources: needs 4 node(s)"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b, err := protojson.MarshalOptions{EmitUnpopulated: true}.Marshal(c.msg)
			if err != nil {
				t.Fatal(err)
			}
			var got jsonapi.SubmitResponse
			if err := json.Unmarshal(b, &got); err != nil {
				t.Fatalf("decode %s: %v", b, err)
			}
			if got.JobID != c.want.JobID || got.Message != c.want.Message ||
				(got.ExpectedStart == nil) != (c.want.ExpectedStart == nil) ||
				(got.ExpectedStart != nil && !got.ExpectedStart.Equal(*c.want.ExpectedStart)) ||
				!slices.Equal(got.Nodes, c.want.Nodes) || got.Partition != c.want.Partition ||
				got.CPUs != c.want.CPUs || got.PendingReason != c.want.PendingReason {
				t.Errorf("decoded %+v, want %+v", got, c.want)
			}
		})
	}
}
