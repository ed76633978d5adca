package compat

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
)

// Case is one generated submission: the options on the command line, the
// script (its #SBATCH lines), and the SBATCH_* variables set. {PREV} in
// any of them stands for the id of a held job the run submits first, so
// dependencies name a job that exists on either side.
type Case struct {
	ID     string            `json:"id"`
	Args   []string          `json:"args"`
	Script string            `json:"script"`
	Env    map[string]string `json:"env,omitempty"`
	// TestOnly submits with --test-only instead of --hold: the answer is
	// the will-run line, nothing is queued.
	TestOnly bool `json:"testOnly,omitempty"`
	// Slurm is Slurm's recorded answer (nil before recording).
	Slurm *Answer `json:"slurm,omitempty"`
}

// option is one sbatch option the generator spells: its long name, a
// prefix getopt_long takes for it, its short letter, its SBATCH_*
// variable, and the values it tries (valid and not). A flag takes none.
type option struct {
	long, abbrev string
	short        byte
	env          string
	flag         bool
	values       []string
}

// options are the generator's vocabulary: every GPU request kind, counts,
// memory and time formats, arrays with steps and throttles, dependencies,
// paths with patterns, and empty values. -M/--clusters is left out: the
// anchor without slurmdbd refuses every cluster name ("Problem talking to
// database"), where a site with one accepts its own.
var options = []option{
	{long: "job-name", abbrev: "job-na", short: 'J', env: "SBATCH_JOB_NAME", values: []string{"t1", "my job", "%j-x", "train.v2"}},
	{long: "partition", abbrev: "parti", short: 'p', env: "SBATCH_PARTITION", values: []string{"gpu", "gpu", "nosuch"}},
	{long: "nodes", abbrev: "nod", short: 'N', values: []string{"1", "2", "1-2", "4", "5", "0", "abc", "2-4"}},
	{long: "ntasks", abbrev: "ntasks", short: 'n', values: []string{"1", "2", "4", "16", "64", "0", "x"}},
	{long: "ntasks-per-node", abbrev: "tasks-per-node", values: []string{"1", "2", "8", "17"}},
	{long: "cpus-per-task", abbrev: "cpus-per-t", short: 'c', values: []string{"1", "2", "8", "16", "17"}},
	{long: "mem", env: "SBATCH_MEM_PER_NODE", values: []string{"0", "1000", "4G", "1024M", "62G", "100G", "1T", "10x"}},
	{long: "mem-per-cpu", abbrev: "mem-per-c", env: "SBATCH_MEM_PER_CPU", values: []string{"1000", "2G", "4096K"}},
	{long: "mem-per-gpu", abbrev: "mem-per-g", env: "SBATCH_MEM_PER_GPU", values: []string{"4G", "8000", "1G"}},
	{long: "time", short: 't', env: "SBATCH_TIMELIMIT", values: []string{"10", "1:00:00", "1-0", "2-12:30", "90:00", "0", "UNLIMITED", "infinite", "1:2:3:4", "x"}},
	{long: "time-min", abbrev: "time-m", values: []string{"5", "30:00"}},
	{long: "gres", abbrev: "gre", env: "SBATCH_GRES", values: []string{"gpu:1", "gpu:h100:2", "gpu:8", "gpu:9", "gpu:a100:1", "gpu", "gpu:h100"}},
	{long: "gpus", short: 'G', env: "SBATCH_GPUS", values: []string{"1", "4", "h100:2", "8", "33", "a100:1"}},
	{long: "gpus-per-node", abbrev: "gpus-per-n", env: "SBATCH_GPUS_PER_NODE", values: []string{"1", "h100:2", "8", "9"}},
	{long: "gpus-per-task", abbrev: "gpus-per-t", env: "SBATCH_GPUS_PER_TASK", values: []string{"1", "2", "h100:1"}},
	{long: "gpus-per-socket", abbrev: "gpus-per-s", values: []string{"1", "2"}},
	{long: "cpus-per-gpu", abbrev: "cpus-per-g", env: "SBATCH_CPUS_PER_GPU", values: []string{"1", "2", "4", "16"}},
	{long: "ntasks-per-gpu", abbrev: "ntasks-per-g", values: []string{"1", "2"}},
	{long: "constraint", abbrev: "constr", short: 'C', env: "SBATCH_CONSTRAINT", values: []string{"", "h100", "foo"}},
	{long: "exclusive", abbrev: "exclu", flag: true},
	{long: "nodelist", abbrev: "nodeli", short: 'w', values: []string{"n1", "n[1-2]", "n9", ""}},
	{long: "exclude", abbrev: "exclude", short: 'x', values: []string{"n1", "n[3-4]", ""}},
	{long: "array", abbrev: "arr", short: 'a', env: "SBATCH_ARRAY_INX", values: []string{"0-3", "1-10:2", "1-10%3", "0-15:4%2", "1,3,5", "5-1", "0-2000000"}},
	{long: "dependency", abbrev: "depend", short: 'd', values: []string{"afterok:{PREV}", "afterany:{PREV}", "singleton", "after:{PREV}", ""}},
	{long: "kill-on-invalid-dep", abbrev: "kill-on", values: []string{"yes", "no"}},
	{long: "nice", abbrev: "nic", values: []string{"0", "10", "100"}},
	{long: "requeue", abbrev: "requ", env: "SBATCH_REQUEUE", flag: true},
	{long: "no-requeue", abbrev: "no-req", env: "SBATCH_NO_REQUEUE", flag: true},
	{long: "output", abbrev: "outp", short: 'o', env: "SBATCH_OUTPUT", values: []string{"out.txt", "./logs/%x-%j.out", "/tmp/o-%j-%N.out", "%x_%A_%a.out", "logs/%J.log"}},
	{long: "error", abbrev: "erro", short: 'e', env: "SBATCH_ERROR", values: []string{"err.txt", "%j.err", "./e-%u.txt"}},
	{long: "input", abbrev: "inp", short: 'i', env: "SBATCH_INPUT", values: []string{"/dev/null", "in.txt"}},
	{long: "open-mode", abbrev: "open", env: "SBATCH_OPEN_MODE", values: []string{"append", "truncate"}},
	{long: "mail-type", abbrev: "mail-t", values: []string{"END", "BEGIN,END", "ALL", "FAIL", "NONE", "bogus"}},
	{long: "mail-user", abbrev: "mail-u", values: []string{"a@b.c", "root"}},
	{long: "comment", abbrev: "comm", values: []string{"hello", "a b"}},
	{long: "account", abbrev: "acco", short: 'A', env: "SBATCH_ACCOUNT", values: []string{"", "physics"}},
	{long: "qos", short: 'q', env: "SBATCH_QOS", values: []string{"", "normal", "foo"}},
	{long: "reservation", abbrev: "reser", env: "SBATCH_RESERVATION", values: []string{"", "foo"}},
	{long: "licenses", abbrev: "lic", short: 'L', values: []string{"foo", "foo:2"}},
	{long: "contiguous", abbrev: "contig", flag: true},
	{long: "oversubscribe", abbrev: "oversub", short: 's', flag: true},
	{long: "mincpus", abbrev: "minc", values: []string{"4"}},
	{long: "begin", abbrev: "beg", short: 'b', values: []string{"now+1hour", "2030-01-01T10:00:00"}},
	{long: "signal", abbrev: "sig", env: "SBATCH_SIGNAL", values: []string{"USR1@60", "B:TERM@120", "10"}},
	{long: "export", abbrev: "expo", env: "SBATCH_EXPORT", values: []string{"ALL", "NONE", "FOO=bar"}},
	{long: "chdir", short: 'D', values: []string{"/tmp", "."}},
}

// gpuOptions are the options a GPU-focused case draws from, so every kind
// of GPU request meets counts and memory often.
var gpuOptions = []string{"gres", "gpus", "gpus-per-node", "gpus-per-task", "gpus-per-socket", "cpus-per-gpu",
	"mem-per-gpu", "ntasks-per-gpu", "nodes", "ntasks", "ntasks-per-node", "cpus-per-task", "mem"}

// Generate returns n cases drawn with seed: the same seed and n give the
// same cases.
func Generate(seed uint64, n int) []Case {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	byName := map[string]option{}
	for _, o := range options {
		byName[o.long] = o
	}
	out := make([]Case, 0, n)
	for i := range n {
		var picked []option
		k := 1 + r.IntN(3)
		if i%3 == 0 {
			for _, name := range pick(r, gpuOptions, k+1) {
				picked = append(picked, byName[name])
			}
		} else {
			for _, j := range r.Perm(len(options))[:k] {
				picked = append(picked, options[j])
			}
		}
		c := build(r, picked)
		c.ID = fmt.Sprintf("g%04d", i)
		c.TestOnly = i%25 == 24
		out = append(out, c)
	}
	return out
}

func pick(r *rand.Rand, names []string, k int) []string {
	idx := r.Perm(len(names))[:min(k, len(names))]
	out := make([]string, len(idx))
	for i, j := range idx {
		out[i] = names[j]
	}
	return out
}

// build places each option on the command line, in a directive or in its
// variable, in one of its spellings; now and then an option is given
// twice (script and command line) to check which wins, and the script is
// decorated with comments, blanks, tabs and a line that ends scanning.
func build(r *rand.Rand, opts []option) Case {
	c := Case{Env: map[string]string{}}
	var directives []string
	for _, o := range opts {
		v := ""
		if !o.flag {
			v = o.values[r.IntN(len(o.values))]
		}
		switch p := r.IntN(20); {
		case p < 9:
			c.Args = append(c.Args, argSpelling(r, o, v)...)
		case p < 16 || o.env == "":
			directives = append(directives, directiveSpelling(r, o, v))
		default:
			c.Env[o.env] = envValue(o, v)
		}
		if !o.flag && len(o.values) > 1 && r.IntN(10) == 0 {
			// Overridden: the script says one thing, the command line
			// (or the variable) another.
			w := o.values[r.IntN(len(o.values))]
			directives = append(directives, directiveSpelling(r, o, w))
			if o.env != "" && r.IntN(2) == 0 {
				c.Env[o.env] = w
			} else {
				c.Args = append(c.Args, argSpelling(r, o, v)...)
			}
		}
	}
	c.Script = script(r, directives)
	if len(c.Env) == 0 {
		c.Env = nil
	}
	return c
}

func envValue(o option, v string) string {
	if o.flag {
		return "1"
	}
	return v
}

// argSpelling is o=v on the command line in one of getopt_long's forms.
func argSpelling(r *rand.Rand, o option, v string) []string {
	name := o.long
	if o.abbrev != "" && r.IntN(4) == 0 {
		name = o.abbrev
	}
	if o.flag {
		if o.short != 0 && r.IntN(3) == 0 {
			return []string{"-" + string(o.short)}
		}
		return []string{"--" + name}
	}
	switch f := r.IntN(5); {
	case o.short != 0 && f == 0 && v != "":
		return []string{"-" + string(o.short) + v}
	case o.short != 0 && f == 1:
		return []string{"-" + string(o.short), v}
	case f == 2 && v != "":
		return []string{"--" + name, v}
	}
	return []string{"--" + name + "=" + v}
}

// directiveSpelling is o=v as a #SBATCH line: quoted when the value holds
// a blank, with a tab or trailing blanks or a trailing comment now and
// then.
func directiveSpelling(r *rand.Rand, o option, v string) string {
	words := argSpelling(r, o, v)
	for i, w := range words {
		if strings.ContainsAny(w, " \t") {
			if name, val, ok := strings.Cut(w, "="); ok && strings.HasPrefix(w, "--") {
				words[i] = name + `="` + val + `"`
			} else {
				words[i] = `"` + w + `"`
			}
		}
	}
	sep := " "
	if r.IntN(6) == 0 {
		sep = "\t"
	}
	line := "#SBATCH" + sep + strings.Join(words, " ")
	switch r.IntN(8) {
	case 0:
		line += "   "
	case 1:
		line += "\t"
	case 2:
		line += " # why"
	}
	return line
}

// script is a batch script with the directives, decorated: comment and
// blank lines among them, lines that look like directives but are not,
// and, after the first command, a directive that must be ignored.
func script(r *rand.Rand, directives []string) string {
	lines := []string{"#!/bin/bash"}
	for _, d := range directives {
		switch r.IntN(40) {
		case 0, 1, 2, 3:
			lines = append(lines, "")
		case 4, 5, 6, 7:
			lines = append(lines, "# a comment")
		case 8:
			// Slurm refuses this one ("Invalid directive found").
			lines = append(lines, "#SBATCHX --comment=not-a-directive")
		case 9, 10, 11:
			lines = append(lines, "## #SBATCH --job-name=commented")
		}
		lines = append(lines, d)
	}
	lines = append(lines, "hostname")
	if r.IntN(4) == 0 {
		lines = append(lines, "#SBATCH --job-name=after-command", "#SBATCH -N 3")
	}
	return strings.Join(lines, "\n") + "\n"
}

// Names lists the options the generator spells (for the report).
func Names() []string {
	out := make([]string, len(options))
	for i, o := range options {
		out[i] = o.long
	}
	slices.Sort(out)
	return out
}
