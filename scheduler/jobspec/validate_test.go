package jobspec

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// Every bad input is an ErrInvalid error whose message names the option and
// the offending value (and, for directives, the line).
func TestBadInput(t *testing.T) {
	tests := []struct {
		script string
		args   []string
		env    map[string]string
		want   []string // substrings of the message
	}{
		{"", []string{"-t", "abc"}, nil, []string{"--time", `"abc"`, "command line"}},
		{"", []string{"--nodes=2-1"}, nil, []string{"--nodes", `"2-1"`}},
		{"", []string{"-N", "4-2"}, nil, []string{"--nodes", `"4-2"`}},
		{"", []string{"-n", "-1"}, nil, []string{"--ntasks", `"-1"`}},
		{"", []string{"-c", "0"}, nil, []string{"--cpus-per-task", `"0"`}},
		{"", []string{"--mem=4X"}, nil, []string{"--mem", `"4X"`}},
		{"", []string{"--mem-per-cpu=0"}, nil, []string{"--mem-per-cpu", `"0"`}},
		{"", []string{"--array=0-2000"}, nil, []string{"--array", `"0-2000"`, "MaxArraySize"}},
		{"", []string{"--dependency=afterok:x"}, nil, []string{"--dependency", `"afterok:x"`}},
		{"", []string{"--begin=yesterday"}, nil, []string{"--begin", `"yesterday"`}},
		{"", []string{"--signal=FOO"}, nil, []string{"--signal", `"FOO"`}},
		{"", []string{"--export=NONE,A"}, nil, []string{"--export", `"NONE,A"`}},
		{"", []string{"--constraint=a&"}, nil, []string{"--constraint", `"a&"`}},
		{"", []string{"--gres=gpu:x:y:z"}, nil, []string{"--gres", `"gpu:x:y:z"`}},
		{"", []string{"--gpus-per-task=2"}, nil, []string{"--gpus-per-task", `"2"`, "task count"}},
		{"", []string{"--gres=gpu:2", "--gpus-per-node=h100:2"}, nil, []string{"--gpus-per-node", `"h100:2"`, "type identification"}},
		{"", []string{"--ntasks-per-gpu=2", "--gpus-per-task=1", "-n", "2"}, nil, []string{"--ntasks-per-gpu", "--gpus-per-task"}},
		// On the Slurm 22.05 anchor: "--ntasks-per-tres needs either a GRES GPU specification or a node/ntask
		// specification"; "Requested mem_per_tres=gres:gpu:1024 but did not request any GPU"; "Invalid GRES
		// specification (with and without type identification)"; "Invalid license specification".
		{"", []string{"--ntasks-per-gpu=1"}, nil, []string{"--ntasks-per-gpu", "GPU request"}},
		{"", []string{"--mem-per-gpu=1G", "-N", "1"}, nil, []string{"--mem-per-gpu", "no GPU"}},
		{"", []string{"--gpus=2", "--gpus-per-node=h100:1"}, nil, []string{"--gpus", "--gpus-per-node", "type"}},
		{"", []string{"--gpus=h100:2", "--gpus-per-task=1", "-n", "2"}, nil, []string{"--gpus", "--gpus-per-task", "type"}},
		{"", []string{"-L", "foo"}, nil, []string{"--licenses", "foo", "license"}},
		{"", []string{"--ntasks-per-gpu=1", "--ntasks-per-node=2"}, nil, []string{"--ntasks-per-gpu", "--ntasks-per-node"}},
		{"", []string{"--gpus-per-socket=1"}, nil, []string{"--gpus-per-socket", "--sockets-per-node"}},
		{"", []string{"--time=10", "--time-min=20"}, nil, []string{"--time-min", "00:20:00", "--time=00:10:00"}},
		{"", []string{"--begin=2026-05-01", "--deadline=2026-04-01"}, nil, []string{"--deadline", "2026-04-01T00:00:00", "--begin"}},
		{"", []string{"--cpus-per-task=2", "--cpus-per-gpu=4"}, nil, []string{"--cpus-per-gpu", `"4"`, "--cpus-per-task"}},
		{"", []string{"--open-mode=sometimes"}, nil, []string{"--open-mode", `"sometimes"`}},
		{"", []string{"--mail-type=LUNCH"}, nil, []string{"--mail-type", `"LUNCH"`}},
		{"", []string{"--gres-flags=bogus"}, nil, []string{"--gres-flags", `"bogus"`}},
		{"", []string{"--gres-flags=enforce-binding,disable-binding"}, nil, []string{"--gres-flags", "contradictory"}},
		{"", []string{"--nice=abc"}, nil, []string{"--nice", `"abc"`}},
		{"", []string{"--requeue=maybe"}, nil, []string{"--requeue", `"maybe"`}},
		{"", []string{"--kill-on-invalid-dep=maybe"}, nil, []string{"--kill-on-invalid-dep", `"maybe"`}},
		{"", []string{"-w", "n[1-4]", "-N", "2"}, nil, []string{"--nodelist", "n[1-4]", "4 nodes"}},
		{"", []string{"-w", "n1", "-x", "n[1-2]"}, nil, []string{"--exclude", `"n1"`}},
		{"", []string{"-w", "n[2-1]"}, nil, []string{"--nodelist", `"n[2-1]"`}},
		{"", []string{"--bogus"}, nil, []string{"--bogus", "unknown option"}},
		{"", []string{"--gpus-per"}, nil, []string{"--gpus-per", "ambiguous"}},
		{"", []string{"-J"}, nil, []string{"--job-name", "requires a value"}},
		{"", []string{"--hold=yes"}, nil, []string{"--hold", "takes no value"}},
		{"", []string{"-Z"}, nil, []string{"-Z", "unknown option"}},
		{"", []string{"--job-name="}, nil, []string{"--job-name", "empty"}},
		{"", []string{"-p", "a,,b"}, nil, []string{"--partition", `"a,,b"`}},
		{"", nil, map[string]string{"SBATCH_TIMELIMIT": "forever"}, []string{"--time", `"forever"`, "SBATCH_TIMELIMIT"}},
		{"#!/bin/sh\n#SBATCH --time=1:2:3:4\n", nil, nil, []string{"--time", `"1:2:3:4"`, "#SBATCH line 2"}},
		{"#!/bin/sh\n#SBATCH -N 2\n#SBATCH --bogus=1\n", nil, nil, []string{"Invalid directive found in batch script", "--bogus", "line 3"}},
		{"#!/bin/sh\n#SBATCH notanoption\n", nil, nil, []string{"Invalid directive found in batch script", "notanoption", "line 2"}},
		{"#!/bin/sh\n#SBATCH --wrap=hostname\n", nil, nil, []string{"--wrap", "#SBATCH line 2"}},
		{"#!/bin/sh\n#SBATCH hetjob\n", nil, nil, []string{"Invalid directive", "hetjob"}},
		{"echo no shebang\n", nil, nil, []string{"batch script", "#!"}},
		{"#!/bin/sh\r\necho\r\n", nil, nil, []string{"DOS line breaks"}},
		{"#!/bin/sh\necho \x00\n", nil, nil, []string{"NUL"}},
		{"   \n", nil, nil, []string{"empty"}},
	}
	for _, tt := range tests {
		script := tt.script
		if script == "" {
			script = "#!/bin/sh\nsrun true\n"
		}
		_, err := Parse([]byte(script), tt.args, tt.env, testOpts())
		if !errors.Is(err, ErrInvalid) {
			t.Errorf("Parse(%q, %q) error = %v; want ErrInvalid", tt.script, tt.args, err)
			continue
		}
		for _, w := range tt.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("Parse(%q, %q) error %q does not mention %q", tt.script, tt.args, err, w)
			}
		}
	}
}

// The JSON form has stable names and reads back.
func TestRequestJSON(t *testing.T) {
	script := "#!/bin/sh\n#SBATCH -J j -N 2-4 --time=1-00:00:00 --array=0-9%2 --dependency=afterok:5 --constraint=a|b&c\n" +
		"#SBATCH --signal=B:USR1@30 --export=ALL,X=1 --gpus=h100:8 --mem-per-gpu=80G --begin=2026-04-01\n"
	req := mustParse(t, script, []string{"-t", "UNLIMITED"}, nil, testOpts())
	data, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]any{"name": "j", "timeLimit": "UNLIMITED", "array": "0-9%2", "constraint": "(a|b)&c",
		"signal": "B:USR1@30", "export": "ALL,X=1", "begin": "2026-04-01T00:00:00Z", "ntasks": float64(2)} {
		if m[k] != want {
			t.Errorf("JSON %s = %v; want %v", k, m[k], want)
		}
	}
	if src := m["sources"].(map[string]any); src["timeLimit"] != SourceCLI || src["array"] != "#SBATCH line 2" {
		t.Errorf("JSON sources = %v", src)
	}
	var back Request
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	if back.TimeLimit != Duration(Unlimited) || back.Array.String() != "0-9%2" || back.Constraint.String() != "(a|b)&c" ||
		back.Signal.String() != "B:USR1@30" || back.Export.String() != "ALL,X=1" || back.Dependency.String() != "afterok:5" ||
		back.Nodes != (NodeRange{2, 4}) || back.Mem != (Memory{MemPerGPU, 80 << 10}) || back.GRES.PerJob.Count("gpu") != 8 ||
		!back.Begin.Equal(at(2026, 4, 1, 0, 0, 0)) {
		t.Errorf("JSON round trip lost fields: %+v", back)
	}
	if back.TimeMin != 0 || m["timeMin"] != nil {
		t.Errorf("unset durations must be omitted")
	}
}
