package rest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/timestamppb"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
)

// jobDesc is the part of v0.0.44_job_desc_msg Parity honours; a nil
// pointer is a property the request did not give.
type jobDesc struct {
	Account        *string  `json:"account"`
	Argv           []string `json:"argv"`
	Array          *string  `json:"array"`
	BeginTime      *noValIn `json:"begin_time"`
	Comment        *string  `json:"comment"`
	Constraints    *string  `json:"constraints"`
	Contiguous     *bool    `json:"contiguous"`
	CPUsPerTask    *int32   `json:"cpus_per_task"`
	Deadline       *int64   `json:"deadline"`
	Dependency     *string  `json:"dependency"`
	Environment    []string `json:"environment"`
	ExcludedNodes  []string `json:"excluded_nodes"`
	Flags          []string `json:"flags"`
	Hold           *bool    `json:"hold"`
	MailType       []string `json:"mail_type"`
	MailUser       *string  `json:"mail_user"`
	MaximumNodes   *int32   `json:"maximum_nodes"`
	MemoryPerCPU   *noValIn `json:"memory_per_cpu"`
	MemoryPerNode  *noValIn `json:"memory_per_node"`
	MinCPUsPerNode *int32   `json:"minimum_cpus_per_node"`
	MinimumNodes   *int32   `json:"minimum_nodes"`
	Name           *string  `json:"name"`
	Nice           *int32   `json:"nice"`
	Nodes          *string  `json:"nodes"`
	OpenMode       []string `json:"open_mode"`
	Partition      *string  `json:"partition"`
	QOS            *string  `json:"qos"`
	RequiredNodes  []string `json:"required_nodes"`
	Requeue        *bool    `json:"requeue"`
	Reservation    *string  `json:"reservation"`
	Script         *string  `json:"script"`
	Shared         []string `json:"shared"`
	StdErr         *string  `json:"standard_error"`
	StdIn          *string  `json:"standard_input"`
	StdOut         *string  `json:"standard_output"`
	Tasks          *int32   `json:"tasks"`
	TasksPerNode   *int32   `json:"tasks_per_node"`
	TimeLimit      *noValIn `json:"time_limit"`
	TimeMinimum    *noValIn `json:"time_minimum"`
	TresPerJob     *string  `json:"tres_per_job"`
	TresPerNode    *string  `json:"tres_per_node"`
	TresPerTask    *string  `json:"tres_per_task"`
	Workdir        *string  `json:"current_working_directory"`
}

// noValIn is a no_val struct in a request: the object, or a bare number
// as slurmrestd also accepts.
type noValIn struct {
	Set, Infinite bool
	Number        int64
}

func (n *noValIn) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] != '{' {
		v, err := strconv.ParseInt(string(b), 10, 64)
		if err != nil {
			return fmt.Errorf("want an integer or a {set, infinite, number} object, got %s", b)
		}
		*n = noValIn{Set: true, Number: v}
		return nil
	}
	var o struct {
		Set      *bool  `json:"set"`
		Infinite bool   `json:"infinite"`
		Number   *int64 `json:"number"`
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&o); err != nil {
		return fmt.Errorf("want {set, infinite, number}: %s", describeJSONError(err))
	}
	n.Infinite = o.Infinite
	if o.Number != nil {
		n.Number = *o.Number
		n.Set = o.Set == nil || *o.Set
	}
	return nil
}

// decodeObject checks an object's property names against the schema's
// (known) and the ones Parity honours (fields of v), then decodes it:
// a name outside the schema is an error; one Parity does not honour is a
// warning, or an error when strict (a change that would be left undone).
func decodeObject(c *call, raw []byte, where string, known map[string]bool, v any, strict bool) error {
	var props map[string]json.RawMessage
	if err := decodeStrict(raw, where, &props); err != nil {
		return err
	}
	honoured := jsonNames(v)
	names := make([]string, 0, len(props))
	for k := range props {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		switch {
		case honoured[k]:
		case known[k] && strict:
			return status.Errorf(codes.InvalidArgument, "%s: field %q cannot be changed through Parity (nothing was changed)", where, k)
		case known[k]:
			c.warn(where+"."+k, "%s.%s is ignored: Parity does not implement it", where, k)
		default:
			return status.Errorf(codes.InvalidArgument, "%s: field %q is not a property of the schema", where, k)
		}
	}
	// The whole object at once; when that fails, property by property,
	// so the error names the property it is in.
	if json.Unmarshal(raw, v) == nil {
		return nil
	}
	fields := reflect.ValueOf(v).Elem()
	for i := range fields.NumField() {
		name, _, _ := strings.Cut(fields.Type().Field(i).Tag.Get("json"), ",")
		p, ok := props[name]
		if !ok {
			continue
		}
		if err := json.Unmarshal(p, fields.Field(i).Addr().Interface()); err != nil {
			return status.Errorf(codes.InvalidArgument, "%s.%s: %s", where, name, describeJSONError(err))
		}
	}
	return nil
}

// spec turns the description into the JobSpec Submit validates; script
// is the request's top-level script when the job gives none.
func (d *jobDesc) spec(script string) (*pb.JobSpec, error) {
	s := &pb.JobSpec{Argv: d.Argv, Nodelist: d.RequiredNodes, Exclude: d.ExcludedNodes, MailType: d.MailType}
	for _, f := range []struct {
		dst *string
		src *string
	}{{&s.Account, d.Account}, {&s.Array, d.Array}, {&s.Comment, d.Comment}, {&s.Constraint, d.Constraints},
		{&s.Dependency, d.Dependency}, {&s.MailUser, d.MailUser}, {&s.Name, d.Name}, {&s.Partition, d.Partition},
		{&s.Qos, d.QOS}, {&s.Reservation, d.Reservation}, {&s.Error, d.StdErr}, {&s.Input, d.StdIn},
		{&s.Output, d.StdOut}, {&s.Workdir, d.Workdir}, {&s.Script, d.Script}} {
		if f.src != nil {
			*f.dst = *f.src
		}
	}
	if s.Script == "" {
		s.Script = script
	}
	if s.Script == "" {
		return nil, status.Error(codes.InvalidArgument, "job.script: a batch job needs a script (job.script or script)")
	}
	setI32(&s.CpusPerTask, d.CPUsPerTask)
	setI32(&s.Ntasks, d.Tasks)
	setI32(&s.NtasksPerNode, d.TasksPerNode)
	setI32(&s.Nodes, d.MinimumNodes)
	setI32(&s.MaxNodes, d.MaximumNodes)
	setI32(&s.Mincpus, d.MinCPUsPerNode)
	setI32(&s.Nice, d.Nice)
	s.Hold, s.Requeue, s.Contiguous = deref(d.Hold), deref(d.Requeue), deref(d.Contiguous)
	if err := d.counts(s); err != nil {
		return nil, err
	}
	env, err := environment(d.Environment)
	if err != nil {
		return nil, err
	}
	s.Env = env
	if err := d.gres(s); err != nil {
		return nil, err
	}
	return s, d.flags(s)
}

func (d *jobDesc) counts(s *pb.JobSpec) error {
	if d.Nodes != nil {
		lo, hi, err := nodeRange(*d.Nodes)
		if err != nil {
			return err
		}
		s.Nodes, s.MaxNodes = lo, hi
	}
	var err error
	if s.TimeLimitSeconds, err = minutes("job.time_limit", d.TimeLimit, -1); err != nil {
		return err
	}
	if s.TimeMinSeconds, err = minutes("job.time_minimum", d.TimeMinimum, 0); err != nil {
		return err
	}
	if d.MemoryPerNode != nil && d.MemoryPerNode.Set {
		s.MemPerNodeMb = d.MemoryPerNode.Number
		if s.MemPerNodeMb == 0 {
			s.MemPerNodeMb = -1 // --mem=0: all of each node
		}
	}
	if d.MemoryPerCPU != nil && d.MemoryPerCPU.Set {
		s.MemPerCpuMb = d.MemoryPerCPU.Number
	}
	if d.BeginTime != nil && d.BeginTime.Set && d.BeginTime.Number > 0 {
		s.Begin = timestamppb.New(time.Unix(d.BeginTime.Number, 0))
	}
	if d.Deadline != nil && *d.Deadline > 0 {
		s.Deadline = timestamppb.New(time.Unix(*d.Deadline, 0))
	}
	return nil
}

// minutes reads a time limit in minutes; infinite is inf seconds.
func minutes(field string, n *noValIn, inf int64) (int64, error) {
	switch {
	case n == nil:
		return 0, nil
	case n.Infinite && inf == 0:
		return 0, status.Errorf(codes.InvalidArgument, "%s: infinite is not allowed", field)
	case n.Infinite:
		return inf, nil
	case !n.Set:
		return 0, nil
	case n.Number < 0 || n.Number > 1<<31:
		return 0, status.Errorf(codes.InvalidArgument, "%s=%d: minutes out of range", field, n.Number)
	}
	return n.Number * 60, nil
}

func nodeRange(v string) (int32, int32, error) {
	lo, hi, ranged := strings.Cut(strings.TrimSpace(v), "-")
	a, err := strconv.ParseInt(lo, 10, 32)
	b := a
	if err == nil && ranged {
		b, err = strconv.ParseInt(hi, 10, 32)
	}
	if err != nil || a < 0 || b < a {
		return 0, 0, status.Errorf(codes.InvalidArgument, "job.nodes=%q: want a count or min-max", v)
	}
	return int32(a), int32(b), nil
}

// environment turns NAME=value entries into the job's environment.
func environment(entries []string) (map[string]string, error) {
	if len(entries) == 0 {
		return nil, nil
	}
	env := make(map[string]string, len(entries))
	for i, e := range entries {
		k, v, ok := strings.Cut(e, "=")
		if !ok || k == "" {
			return nil, status.Errorf(codes.InvalidArgument, "job.environment[%d]=%q: want NAME=value", i, e)
		}
		env[k] = v
	}
	return env, nil
}

// gres reads the tres_per_* strings ("gres/gpu:2", "gres/gpu:h100:1").
func (d *jobDesc) gres(s *pb.JobSpec) error {
	for _, f := range []struct {
		field string
		src   *string
		opt   *string
	}{{"job.tres_per_job", d.TresPerJob, &s.GpusOption}, {"job.tres_per_node", d.TresPerNode, &s.GresOption},
		{"job.tres_per_task", d.TresPerTask, &s.GpusPerTaskOption}} {
		if f.src == nil || *f.src == "" {
			continue
		}
		terms, err := gresTerms(f.field, *f.src)
		if err != nil {
			return err
		}
		if s.Gres == nil {
			s.Gres = &pb.GRESRequest{}
		}
		switch f.field {
		case "job.tres_per_job":
			s.Gres.PerJob = terms
		case "job.tres_per_node":
			s.Gres.PerNode = terms
		default:
			s.Gres.PerTask = terms
		}
		*f.opt = strings.ReplaceAll(*f.src, "gres/", "")
	}
	return nil
}

func gresTerms(field, v string) ([]*pb.GRESTerm, error) {
	var out []*pb.GRESTerm
	for _, item := range strings.Split(v, ",") {
		name, ok := strings.CutPrefix(strings.TrimSpace(item), "gres/")
		parts := strings.Split(name, ":")
		if !ok || len(parts) < 2 || len(parts) > 3 || parts[0] == "" {
			return nil, status.Errorf(codes.InvalidArgument, "%s=%q: want gres/NAME[:TYPE]:COUNT", field, v)
		}
		n, err := strconv.ParseInt(parts[len(parts)-1], 10, 32)
		if err != nil || n <= 0 {
			return nil, status.Errorf(codes.InvalidArgument, "%s=%q: count %q is not a positive integer", field, v, parts[len(parts)-1])
		}
		t := &pb.GRESTerm{Name: parts[0], Count: n}
		if len(parts) == 3 {
			t.Type = parts[1]
		}
		out = append(out, t)
	}
	return out, nil
}

func (d *jobDesc) flags(s *pb.JobSpec) error {
	for _, f := range d.Flags {
		switch f {
		case "KILL_INVALID_DEPENDENCY":
			s.KillOnInvalidDep, s.KillOnInvalidDepGiven = true, true
		case "NO_KILL_INVALID_DEPENDENCY":
			s.KillOnInvalidDep, s.KillOnInvalidDepGiven = false, true
		default:
			return status.Errorf(codes.InvalidArgument, "job.flags: %s is not supported by Parity", f)
		}
	}
	if slices.Contains(d.Shared, "none") {
		s.Exclusive = true
	} else if slices.Contains(d.Shared, "oversubscribe") {
		s.Oversubscribe = true
	}
	if len(d.OpenMode) > 0 {
		s.OpenMode = strings.ToLower(d.OpenMode[0])
	}
	return nil
}

func setI32(dst *int32, src *int32) {
	if src != nil {
		*dst = *src
	}
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

// jsonNames lists the JSON names of the fields of the struct v points to.
func jsonNames(v any) map[string]bool {
	t := reflect.TypeOf(v).Elem()
	out := make(map[string]bool, t.NumField())
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		out[name] = true
	}
	return out
}
