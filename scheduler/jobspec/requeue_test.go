package jobspec

import (
	"strings"
	"testing"
)

// --requeue[=expedite] as Slurm 25.11 reads it (expedited requeue), with
// plain --requeue and --no-requeue as 22.05 has them.
func TestRequeueExpedite(t *testing.T) {
	const body = "true\n"
	cases := []struct {
		name             string
		script           string
		args             []string
		env              map[string]string
		opts             ParseOptions
		requeue, expedit bool
	}{
		{name: "cluster default", requeue: true},
		{name: "JobRequeue=0 default", opts: ParseOptions{NoRequeue: true}},
		{name: "plain", args: []string{"--requeue"}, requeue: true},
		{name: "expedite", args: []string{"--requeue=expedite"}, requeue: true, expedit: true},
		{name: "expedite upper case", args: []string{"--requeue=EXPEDITE"}, requeue: true, expedit: true},
		{name: "abbreviated option", args: []string{"--requ=expedite"}, requeue: true, expedit: true},
		{name: "expedite on a JobRequeue=0 cluster", args: []string{"--requeue=expedite"}, opts: ParseOptions{NoRequeue: true}, requeue: true, expedit: true},
		{name: "empty value is plain", args: []string{"--requeue="}, requeue: true},
		// An optional value binds only with '=': the next word is the script.
		{name: "separate word not taken", args: []string{"--requeue", "job.sh"}, requeue: true},
		{name: "no-requeue", args: []string{"--no-requeue"}},
		{name: "no-requeue after expedite", args: []string{"--requeue=expedite", "--no-requeue"}},
		{name: "expedite after no-requeue", args: []string{"--no-requeue", "--requeue=expedite"}, requeue: true, expedit: true},
		{name: "plain after expedite drops expedite", args: []string{"--requeue=expedite", "--requeue"}, requeue: true},
		{name: "directive", script: "#SBATCH --requeue=expedite\n", requeue: true, expedit: true},
		{name: "directive plain", script: "#SBATCH --requeue\n", opts: ParseOptions{NoRequeue: true}, requeue: true},
		{name: "directive then no-requeue directive", script: "#SBATCH --requeue=expedite\n#SBATCH --no-requeue\n"},
		{name: "command line beats directive", script: "#SBATCH --requeue=expedite\n", args: []string{"--requeue"}, requeue: true},
		{name: "command line expedite beats directive", script: "#SBATCH --no-requeue\n", args: []string{"--requeue=expedite"}, requeue: true, expedit: true},
		{name: "environment expedite", env: map[string]string{"SBATCH_REQUEUE": "expedite"}, opts: ParseOptions{NoRequeue: true}, requeue: true, expedit: true},
		{name: "environment flag", env: map[string]string{"SBATCH_REQUEUE": "1"}, opts: ParseOptions{NoRequeue: true}, requeue: true},
		// sbatch: the command line beats SBATCH_*, which beats #SBATCH.
		{name: "environment beats directive", script: "#SBATCH --requeue\n", env: map[string]string{"SBATCH_REQUEUE": "expedite"}, requeue: true, expedit: true},
		{name: "command line beats environment", env: map[string]string{"SBATCH_REQUEUE": "expedite"}, args: []string{"--requeue"}, requeue: true},
		{name: "environment no-requeue", env: map[string]string{"SBATCH_NO_REQUEUE": "1"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			opts := c.opts
			opts.Now = tuesday
			script := "#!/bin/sh\n" + c.script + body
			req, err := Parse([]byte(script), c.args, c.env, opts)
			if err != nil {
				t.Fatalf("Parse(%q, %q): %v", c.script, c.args, err)
			}
			if req.Requeue != c.requeue || req.RequeueExpedite != c.expedit {
				t.Errorf("requeue %v expedite %v; want %v %v", req.Requeue, req.RequeueExpedite, c.requeue, c.expedit)
			}
		})
	}
}

// Any other value is refused, naming the option, the value and where it
// came from, and saying what is allowed.
func TestRequeueBadValues(t *testing.T) {
	cases := []struct {
		script string
		args   []string
		env    map[string]string
		want   []string
	}{
		{args: []string{"--requeue=maybe"}, want: []string{"--requeue", `"maybe"`, "command line", "expedite"}},
		{args: []string{"--requeue=expedited"}, want: []string{"--requeue", `"expedited"`, "not expedited"}},
		{args: []string{"--requeue=1"}, want: []string{"--requeue", `"1"`, "expedite"}},
		{args: []string{"--requeue=expedite,hold"}, want: []string{"--requeue", `"expedite,hold"`}},
		{args: []string{"--requeue= expedite"}, want: []string{"--requeue", `" expedite"`}},
		{args: []string{"--no-requeue=expedite"}, want: []string{"--no-requeue", "takes no value"}},
		{script: "#SBATCH --requeue=later\n", want: []string{"--requeue", `"later"`, "#SBATCH line 2"}},
		// A value given as its own word on a directive line is not the
		// option's: it is a stray word, as sbatch reads it.
		{script: "#SBATCH --requeue expedite\n", want: []string{"Invalid directive", "expedite"}},
		{env: map[string]string{"SBATCH_REQUEUE": "soon"}, want: []string{"--requeue", `"soon"`, "SBATCH_REQUEUE"}},
	}
	for _, c := range cases {
		_, err := Parse([]byte("#!/bin/sh\n"+c.script+"true\n"), c.args, c.env, testOpts())
		if err == nil {
			t.Errorf("Parse(%q, %q, %v) accepted it", c.script, c.args, c.env)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("Parse(%q, %q, %v): %q does not say %q", c.script, c.args, c.env, err, w)
			}
		}
	}
}

// FuzzRequeueValue: whatever follows --requeue=, the parse either takes
// it as plain or expedited requeue (only "" and expedite in any case) or
// refuses it with an error naming the option; it never panics.
func FuzzRequeueValue(f *testing.F) {
	for _, s := range []string{"", "expedite", "EXPEDITE", "expedited", "maybe", "1", "expedite\n", "=expedite", "\x00"} {
		f.Add(s, false)
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, v string, directive bool) {
		var req *Request
		var err error
		if directive {
			if strings.ContainsAny(v, "\n\r") {
				return // a line break ends the directive: another test's input
			}
			req, err = Parse([]byte("#!/bin/sh\n#SBATCH --requeue="+v+"\ntrue\n"), nil, nil, testOpts())
		} else {
			req, err = Parse([]byte("#!/bin/sh\ntrue\n"), []string{"--requeue=" + v}, nil, testOpts())
		}
		if err != nil {
			if !strings.Contains(err.Error(), "requeue") && !directive {
				t.Fatalf("--requeue=%q: the error %q does not name the option", v, err)
			}
			return
		}
		if !req.Requeue {
			t.Fatalf("--requeue=%q accepted without requeue", v)
		}
		expedite := strings.EqualFold(v, "expedite")
		switch {
		case !directive && !expedite && v != "":
			t.Fatalf("--requeue=%q accepted (expedite %v); only expedite and no value are", v, req.RequeueExpedite)
		case !directive && req.RequeueExpedite != expedite:
			t.Fatalf("--requeue=%q: expedite %v", v, req.RequeueExpedite)
		// A directive's value may be quoted or followed by a comment,
		// but expedite comes only from the word itself.
		case directive && req.RequeueExpedite && !strings.Contains(strings.ToLower(v), "expedite"):
			t.Fatalf("#SBATCH --requeue=%q: expedite without the word", v)
		case directive && expedite && !req.RequeueExpedite:
			t.Fatalf("#SBATCH --requeue=%q: not expedited", v)
		}
	})
}
