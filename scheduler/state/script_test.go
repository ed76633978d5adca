package state

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/parityhpc/parity/gres"
	"github.com/parityhpc/parity/scheduler/core"
	"github.com/parityhpc/parity/topology"
)

var update = flag.Bool("update", false, "rewrite testdata/*.txt with the output the machine gives")

// epoch is when every scripted scenario starts; `advance` moves its clock.
var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// script runs scripted scenarios in the style of etcd raft's data-driven
// tests: each block of a testdata file is a command, a line "----" and
// what the machine answers (its effects, or the refusal) with its state
// after, up to a blank line. Run with -update to rewrite the expectations.
type script struct {
	m   *Machine[*Job]
	now time.Time
}

// TestScripts runs every testdata/*.txt scenario.
func TestScripts(t *testing.T) {
	files, err := filepath.Glob("testdata/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no scenarios in testdata (%v)", err)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txt"), func(t *testing.T) { runScript(t, file) })
	}
}

func runScript(t *testing.T, file string) {
	src, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	s := &script{m: New[*Job](Limits{MaxJobCount: 100}), now: epoch}
	var out strings.Builder
	lines := strings.Split(string(src), "\n")
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			out.WriteString(line + "\n")
			continue
		}
		start := i + 1
		i++
		if i >= len(lines) || lines[i] != "----" {
			t.Fatalf("%s:%d: %q is not followed by ----", file, start, line)
		}
		var want []string
		for i+1 < len(lines) && lines[i+1] != "" {
			i++
			want = append(want, lines[i])
		}
		got := s.run(line)
		fmt.Fprintf(&out, "%s\n----\n%s\n", line, got)
		if !*update && got != strings.Join(want, "\n") {
			t.Errorf("%s:%d: %s\ngot:\n%s\nwant:\n%s", file, start, line, got, strings.Join(want, "\n"))
		}
	}
	if *update {
		text := strings.TrimRight(out.String(), "\n") + "\n"
		if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// run applies one script line and returns the answer and the state.
func (s *script) run(line string) string {
	verb, args, err := splitLine(line)
	if err == nil && verb == "advance" {
		var d time.Duration
		if d, err = time.ParseDuration(args.get("by")); err == nil {
			s.now = s.now.Add(d)
			return "now " + stamp(s.now)
		}
	}
	if err == nil && (verb == "split" || verb == "fault" || verb == "node" || verb == "fair-share") {
		return s.direct(verb, args)
	}
	var cmd Command
	if err == nil {
		cmd, err = parseCommand(verb, args)
	}
	if err != nil {
		return "bad script line: " + err.Error()
	}
	if p, ok := cmd.(preemptAt); ok {
		// The grace end is relative in the script, absolute in the command.
		p.GraceEnd = s.now.Add(p.grace)
		cmd = p.Preempt
	}
	var b strings.Builder
	effects, err := s.m.Apply(cmd, s.now)
	if err != nil {
		fmt.Fprintf(&b, "refused (%v): %s\n", kindOf(err), err)
	}
	for _, e := range effects {
		b.WriteString(String(e) + "\n")
	}
	b.WriteString(strings.TrimRight(s.m.Dump(), "\n"))
	return b.String()
}

// direct runs what the controller still does outside Apply: an array
// task split off under an id TakeID hands out, a policy's fault marked on
// a run.
func (s *script) direct(verb string, a args) string {
	switch verb {
	case "split":
		j := &Job{State: Pending, Reason: string(core.ReasonNone), Core: core.Job{ID: s.m.TakeID(), User: a.get("user")}}
		j.SyncCore()
		if err := s.m.AddSplit(j); err != nil {
			return "refused: " + err.Error()
		}
	case "fault":
		j := s.m.Job(a.id())
		if j == nil {
			return "no such job"
		}
		j.FaultReason, j.FaultState = a.get("reason"), a.get("state")
	case "node":
		s.m.AddNode(a.get("name"))
	case "fair-share":
		d, err := time.ParseDuration(a.get("half-life"))
		if err != nil {
			return "bad script line: " + err.Error()
		}
		s.m.EnableUsage(d)
	}
	return strings.TrimRight(s.m.Dump(), "\n")
}

func kindOf(err error) string {
	for _, k := range []error{ErrNotFound, ErrPrecondition, ErrPermission, ErrExhausted, ErrConflict, ErrInvalid} {
		if errors.Is(err, k) {
			return strings.TrimPrefix(k.Error(), "state: ")
		}
	}
	return "unclassified"
}

// preemptAt is a script's preempt, its grace relative to the script's now.
type preemptAt struct {
	Preempt
	grace time.Duration
}

type args map[string]string

func (a args) get(k string) string { return a[k] }
func (a args) has(k string) bool   { _, ok := a[k]; return ok }

func (a args) id() core.JobID {
	n, _ := strconv.ParseUint(a["job"], 10, 64)
	return core.JobID(n)
}

func (a args) int32(k string) int32 {
	n, _ := strconv.ParseInt(a[k], 10, 32)
	return int32(n)
}

// splitLine reads `verb k=v k="v w" flag`.
func splitLine(line string) (string, args, error) {
	fields := strings.Fields(line)
	a := args{}
	for i := 1; i < len(fields); i++ {
		k, v, ok := strings.Cut(fields[i], "=")
		if ok && strings.HasPrefix(v, `"`) {
			for !strings.HasSuffix(v, `"`) || len(v) == 1 {
				if i++; i >= len(fields) {
					return "", nil, fmt.Errorf("unterminated quote in %q", line)
				}
				v += " " + fields[i]
			}
			var err error
			if v, err = strconv.Unquote(v); err != nil {
				return "", nil, fmt.Errorf("%s: %w", k, err)
			}
		}
		a[k] = v
	}
	return fields[0], a, nil
}

func parseCommand(verb string, a args) (Command, error) {
	switch verb {
	case "submit":
		j := &Job{State: Pending, Reason: string(core.ReasonNone), Core: core.Job{User: a.get("user"), Partition: a.get("partition"), Account: a.get("account")}}
		if c := a.get("charge"); c != "" {
			var err error
			if j.Charge, err = strconv.ParseFloat(c, 64); err != nil {
				return nil, err
			}
		}
		if p := a.get("partitions"); p != "" {
			j.Core.Partitions = strings.Split(p, ",")
		}
		if a.has("hold") {
			j.Core.Hold = core.HoldUser
		}
		if b := a.get("begin"); b != "" {
			t, err := time.Parse(time.RFC3339, b)
			if err != nil {
				return nil, err
			}
			j.Core.Begin = t
		}
		return Submit[*Job]{Job: j}, nil
	case "hold":
		return Hold{Job: a.id(), By: a.get("by"), Admin: a.has("admin")}, nil
	case "release":
		return Release{Job: a.id(), By: a.get("by"), Operator: a.has("operator")}, nil
	case "cancel":
		return Cancel{Job: a.id(), By: a.get("by"), Reason: a.get("reason"), EndReason: a.get("end-reason"), EndDetail: a.get("end-detail"),
			Remainder: a.has("remainder")}, nil
	case "preempt":
		grace, err := time.ParseDuration(a.get("grace"))
		if err != nil {
			return nil, err
		}
		by, _ := strconv.ParseUint(a.get("by"), 10, 64)
		return preemptAt{Preempt{Job: a.id(), By: core.JobID(by), Mode: core.PreemptMode(a.get("mode"))}, grace}, nil
	case "end-grace":
		return EndGrace{Job: a.id()}, nil
	case "accrue":
		return Accrue{}, nil
	case "update":
		u := Update{Job: a.id(), By: a.get("by")}
		if l := a.get("limit"); l != "" {
			d, err := time.ParseDuration(l)
			if err != nil {
				return nil, err
			}
			u.TimeLimit = &d
		}
		if a.has("nice") {
			n, err := strconv.Atoi(a.get("nice"))
			if err != nil {
				return nil, err
			}
			u.Nice = &n
		}
		if a.has("name") {
			name := a.get("name")
			u.Name = &name
		}
		if a.has("also") {
			u.Also = strings.Split(a.get("also"), ",")
		}
		if a.has("place") {
			u.Place = &Placement{Partitions: strings.Split(a.get("place"), ","), QOS: a.get("qos"), Account: a.get("account")}
		}
		return u, nil
	case "flag":
		return Flag{Job: a.id(), Reason: a.get("reason"), Detail: a.get("detail"), Clear: a.has("clear")}, nil
	case "suspend":
		return Suspend{Job: a.id(), By: a.get("by")}, nil
	case "resume":
		return Resume{Job: a.id(), By: a.get("by")}, nil
	case "stop":
		return Stop{Job: a.id(), By: a.get("by"), Reason: a.get("reason"), State: a.get("state"), Requeue: a.has("requeue"),
			CancelledBy: a.get("cancelled-by"), Log: a.get("log"), Expedite: a.has("expedite"), Avoid: ParseAvoid(a.get("avoid"))}, nil
	case "signal":
		return SignalJob{Job: a.id(), By: a.get("by"), Signal: a.int32("sig")}, nil
	case "requeue":
		return Requeue{Job: a.id(), By: a.get("by"), Hold: a.has("hold"), Interactive: a.has("interactive"), NoRequeue: a.has("no-requeue")}, nil
	case "start":
		allocs, err := parseAlloc(a.get("alloc"))
		if err != nil {
			return nil, err
		}
		var limit time.Duration
		if l := a.get("limit"); l != "" {
			if limit, err = time.ParseDuration(l); err != nil {
				return nil, err
			}
		}
		return Start{Job: a.id(), Partition: a.get("partition"), TimeLimit: limit, Alloc: allocs}, nil
	case "set-node":
		return SetNode{Node: a.get("node"), By: a.get("by"), Reason: a.get("reason"), State: NodeState(a.get("state")), IfUp: a.has("if-up")}, nil
	case "drain-gpus":
		return DrainGPUs{Node: a.get("node"), By: a.get("by"), Reason: a.get("reason"), Devices: splitList(a.get("devices")), Resume: a.has("resume")}, nil
	case "register":
		inv := &gres.Inventory{}
		for _, u := range splitList(a.get("devices")) {
			inv.Devices = append(inv.Devices, gres.Device{UUID: u})
		}
		if a.has("none") {
			inv = nil
		}
		return Register{Node: a.get("node"), Inventory: inv}, nil
	case "exempt":
		return ExemptGPUs{Node: a.get("node"), By: a.get("by"), Devices: splitList(a.get("devices")), Clear: a.has("clear")}, nil
	case "health-drain":
		return HealthDrain{Node: a.get("node"), Device: a.get("device"), Reason: a.get("reason"), Capped: a.has("capped")}, nil
	case "health-resume":
		return HealthResume{Node: a.get("node"), Device: a.get("device")}, nil
	case "health-hold":
		return HealthHold{Node: a.get("node"), Device: a.get("device"), Reason: a.get("reason")}, nil
	case "end":
		return End{Job: a.id(), State: a.get("state"), Reason: a.get("reason"), ExitCode: a.int32("exit"), Signal: a.int32("sig"),
			Actor: a.get("actor"), Except: a.get("except"), Requeue: a.has("requeue"), Hold: a.has("hold"),
			Expedite: a.has("expedite"), Avoid: ParseAvoid(a.get("avoid"))}, nil
	}
	return nil, fmt.Errorf("unknown verb %q", verb)
}

func splitList(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

// parseAlloc reads FormatAlloc's form: node:cpus:dev+dev/….
func parseAlloc(s string) ([]core.NodeAlloc, error) {
	if s == "" {
		return nil, nil
	}
	var out []core.NodeAlloc
	for _, part := range strings.Split(s, "/") {
		f := strings.Split(part, ":")
		if len(f) != 3 {
			return nil, fmt.Errorf("alloc %q: want node:cpus:devices", part)
		}
		cpus, err := topology.ParseCPUList(f[1])
		if err != nil {
			return nil, fmt.Errorf("alloc %q: %w", part, err)
		}
		a := core.NodeAlloc{Node: f[0], CPUs: cpus}
		if f[2] != "" {
			a.Devices = strings.Split(f[2], "+")
		}
		out = append(out, a)
	}
	return out, nil
}
