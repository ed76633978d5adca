package compat

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// A State is a cluster state built by sbatch and scontrol commands run
// one after the other; each state starts from the one before it, so the
// list is one script that runs the same on the anchor and on a lab.
type State struct {
	Name string
	// Steps are run in order; an sbatch step's id (--parsable) is kept
	// for the normaliser.
	Steps [][]string
	// Running is how many jobs (array tasks counted) run once the
	// scheduler has placed what it can: the state is recorded then.
	Running int
	// Reasons are the pending reasons (squeue %r) that jobs, by name,
	// show once the scheduler has looked at the state: Slurm's main
	// scheduler may take a minute after a drain to word a job's reason
	// anew, so the state is recorded only then.
	Reasons map[string]string
	// Backfill records the state after a backfill cycle that began once
	// its steps were done (a state with a job waiting for nodes).
	Backfill bool
	// Accounted, when set, is also waited for: the accounting records the
	// state's jobs as sacct shows them once they ended.
	Accounted func(ctx context.Context, s Side, dir string) bool
}

// nodesDown is Slurm's reason for a job that needs more nodes than are up.
const nodesDown = "Nodes required for job are DOWN, DRAINED or reserved for jobs in higher priority partitions"

// statusScript is every sbatch step's job: long enough to be running
// while the state is recorded.
const statusScript = "#!/bin/bash\nsleep 900\n"

func sbatch(args ...string) []string {
	return append(append([]string{"sbatch", "--parsable", "-o", "/dev/null", "--mem=1000"}, args...), scriptName)
}

// States are the cluster states recorded: idle; running jobs, an array
// among them; pending, held and niced jobs besides; a node drained under its jobs and one drained
// idle; a job across nodes.
var States = []State{
	{Name: "idle"},
	{Name: "running", Running: 5, Steps: [][]string{
		sbatch("-J", "two", "-n", "2", "--gres=gpu:2", "-t", "60"),
		sbatch("-J", "half", "--gpus-per-node=4", "-c", "4", "-t", "30"),
		sbatch("-J", "arr", "--array=1-3", "-G", "1", "-t", "20"),
	}},
	// Submitted once the others run: a scheduler that weighs job size
	// would start the four-node job first.
	{Name: "pending", Running: 5, Backfill: true, Steps: [][]string{
		sbatch("-J", "held", "--hold", "-t", "10"),
		sbatch("-J", "nice", "--nice=100", "-N", "4", "--gpus-per-node=8", "-t", "5"),
	}},
	{Name: "drained", Running: 5, Backfill: true, Reasons: map[string]string{"nice": nodesDown}, Steps: [][]string{
		{"scontrol", "update", "NodeName=n1", "State=DRAIN", "Reason=fan"},
		{"scontrol", "update", "NodeName=n4", "State=DRAIN", "Reason=maint"},
	}},
	{Name: "wide", Running: 6, Backfill: true, Reasons: map[string]string{"nice": nodesDown}, Steps: [][]string{
		sbatch("-J", "wide", "-N", "2", "--gpus-per-node=1", "-t", "15"),
	}},
}

// Invocation is one status command run on every state.
type Invocation struct {
	Label string
	Argv  []string
}

// Invocations are the status commands recorded per state.
var Invocations = []Invocation{
	{"sinfo", []string{"sinfo"}},
	{"sinfo -N -l", []string{"sinfo", "-N", "-l"}},
	{"sinfo -o", []string{"sinfo", "-o", "%P|%a|%l|%s|%F|%D|%t|%T|%N|%c|%z|%m|%d|%w|%f|%G|%C|%A|%h|%g|%X|%Y|%Z"}},
	{"sinfo -N -o", []string{"sinfo", "-N", "-o", "%N|%P|%T|%t|%G|%C|%E|%m"}},
	{"sinfo -R", []string{"sinfo", "-R"}},
	{"squeue", []string{"squeue"}},
	{"squeue -l", []string{"squeue", "-l"}},
	{"squeue -o", []string{"squeue", "-o", queueFormat()}},
	{"squeue -t PD", []string{"squeue", "-t", "PD"}},
	{"squeue -t R", []string{"squeue", "-t", "R"}},
	{"squeue -r", []string{"squeue", "-r"}},
	{"sprio", []string{"sprio"}},
	{"sprio -l", []string{"sprio", "-l"}},
	{"sprio -o", []string{"sprio", "-o", "%i|%r|%u|%Y|%A|%F|%J|%P|%Q|%N"}},
}

// Output is one invocation's answer on one side.
type Output struct {
	Label  string   `json:"label"`
	Argv   []string `json:"argv"`
	Stdout string   `json:"stdout"`
	Stderr string   `json:"stderr,omitempty"`
	Code   int      `json:"code"`
}

// StateRecord is one state as one side printed it: the job ids its
// sbatch steps got so far, in order, and the directory they ran in,
// which the normaliser replaces.
type StateRecord struct {
	State   string   `json:"state"`
	Dir     string   `json:"dir"`
	IDs     []string `json:"ids"`
	Outputs []Output `json:"outputs"`
}

// settle bounds waiting for the scheduler to place a state's jobs.
const settle = 90 * time.Second

// BuildStates builds each state on s in dir and records the
// invocations once it has settled; poll is how long to wait between
// looks at the queue.
func BuildStates(ctx context.Context, s Side, dir string, poll time.Duration) ([]StateRecord, error) {
	return buildStates(ctx, s, dir, poll, States, Invocations)
}

// buildStates builds states on s in dir and records invs in each.
func buildStates(ctx context.Context, s Side, dir string, poll time.Duration, states []State, invs []Invocation) ([]StateRecord, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("compat: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, scriptName), []byte(statusScript), 0o755); err != nil {
		return nil, fmt.Errorf("compat: %w", err)
	}
	var ids []string
	var out []StateRecord
	for _, st := range states {
		stepped := time.Now()
		for _, argv := range st.Steps {
			o, errs, code := s.Run(ctx, dir, nil, argv...)
			if code != 0 {
				return out, fmt.Errorf("compat: state %s: %s: exit %d: %s", st.Name, strings.Join(argv, " "), code, strings.TrimSpace(errs))
			}
			if argv[0] == "sbatch" {
				id, _, _ := strings.Cut(strings.TrimSpace(o), ";")
				ids = append(ids, id)
			}
		}
		if err := waitSettled(ctx, s, dir, st, poll); err != nil {
			return out, err
		}
		if bw, ok := s.(backfillWaiter); ok && st.Backfill {
			if err := bw.waitBackfill(ctx, dir, stepped); err != nil {
				return out, fmt.Errorf("compat: state %s: %w", st.Name, err)
			}
		}
		rec := StateRecord{State: st.Name, Dir: dir, IDs: slices.Clone(ids)}
		for _, inv := range invs {
			o, errs, code := s.Run(ctx, dir, nil, inv.Argv...)
			rec.Outputs = append(rec.Outputs, Output{Label: inv.Label, Argv: inv.Argv, Stdout: o, Stderr: errs, Code: code})
		}
		out = append(out, rec)
	}
	return out, nil
}

// waitSettled waits until st.Running jobs run and no pending job waits
// for the scheduler's first look (reason None).
func waitSettled(ctx context.Context, s Side, dir string, st State, poll time.Duration) error {
	deadline := time.Now().Add(settle)
	for {
		o, errs, code := s.Run(ctx, dir, nil, "squeue", "-h", "-r", "-o", "%t|%r|%j")
		if code != 0 {
			return fmt.Errorf("compat: state %s: squeue: exit %d: %s", st.Name, code, strings.TrimSpace(errs))
		}
		running, unseen := 0, false
		for _, l := range strings.Split(strings.TrimSpace(o), "\n") {
			f := strings.SplitN(l, "|", 3)
			if len(f) < 3 {
				continue
			}
			running += map[bool]int{true: 1}[f[0] == "R"]
			want, named := st.Reasons[f[2]]
			unseen = unseen || f[0] == "PD" && (f[1] == "None" || named && f[1] != want)
		}
		if running == st.Running && !unseen && (st.Accounted == nil || st.Accounted(ctx, s, dir)) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("compat: state %s: %d jobs run, want %d (queue %q)", st.Name, running, st.Running, o)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(poll):
		}
	}
}

// StatesPath is the committed recording of the states on the anchor.
const StatesPath = "testdata/states.jsonl"

// StatesDifferencesPath lists the documented differences of the states.
const StatesDifferencesPath = "testdata/statesdifferences.txt"

// SaveStates writes state records, one a line.
func SaveStates(path string, recs []StateRecord) error {
	var b strings.Builder
	for _, r := range recs {
		line, err := json.Marshal(r)
		if err != nil {
			return fmt.Errorf("compat: %s: %w", r.State, err)
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		return fmt.Errorf("compat: %w", err)
	}
	return nil
}

// LoadStates reads state records.
func LoadStates(path string) ([]StateRecord, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("compat: %w", err)
	}
	var out []StateRecord
	for n, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var r StateRecord
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			return nil, fmt.Errorf("compat: %s:%d: %w", path, n+1, err)
		}
		out = append(out, r)
	}
	return out, nil
}
