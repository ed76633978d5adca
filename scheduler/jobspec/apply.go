package jobspec

import (
	"slices"
	"strings"
	"time"
)

func applyNodes(b *builder, s setting) error {
	if strings.TrimSpace(s.value) == "0" {
		// sbatch takes -N 0 (the anchor printed NumNodes=0); Parity
		// derives the count as for no -N.
		b.req.Nodes = NodeRange{}
		return nil
	}
	r, err := ParseNodes(s.value)
	if err != nil {
		return err
	}
	b.req.Nodes = r
	return nil
}

func applyTime(b *builder, s setting) error {
	d, err := ParseTimeLimit(s.value)
	if err != nil {
		return err
	}
	if d == 0 {
		d = Unlimited // --time=0 asks for no limit
	}
	b.req.TimeLimit = Duration(d)
	return nil
}

func applyTimeMin(b *builder, s setting) error {
	d, err := ParseTimeLimit(s.value)
	if err != nil {
		return err
	}
	b.req.TimeMin = Duration(d)
	return nil
}

// gresFlagValues and mailTypes are read-only lookup tables. Slurm's four
// --gres-flags, and Parity's one-parent: a fast-linked set of partitions
// (MIG slices, compute partitions), all from one whole GPU on each node.
var gresFlagValues = [...]string{"enforce-binding", "disable-binding", "one-task-per-sharing", "multiple-tasks-per-sharing", GRESFlagOneParent}

// GRESFlagOneParent is the --gres-flags value asking for one parent.
const GRESFlagOneParent = "one-parent"

func applyGRESFlags(b *builder, s setting) error {
	items := strings.Split(strings.ToLower(s.value), ",")
	for _, it := range items {
		if !slices.Contains(gresFlagValues[:], it) {
			return reason("unknown flag " + it + " (want " + strings.Join(gresFlagValues[:], ", ") + ")")
		}
	}
	if slices.Contains(items, "enforce-binding") && slices.Contains(items, "disable-binding") ||
		slices.Contains(items, "one-task-per-sharing") && slices.Contains(items, "multiple-tasks-per-sharing") {
		return reason("contradictory flags")
	}
	b.req.GRESFlags = strings.Join(items, ",")
	return nil
}

func applyConstraint(b *builder, s setting) error {
	c, err := ParseConstraint(s.value)
	if err != nil {
		return err
	}
	b.req.Constraint = c
	return nil
}

func applyExclusive(b *builder, s setting) error {
	v := strings.ToLower(strings.TrimSpace(s.value))
	switch v {
	case "":
		v = ExclusiveNode
	case ExclusiveUser, ExclusiveMCS, ExclusiveTopo:
	default:
		return reason("expected user, mcs or topo")
	}
	b.req.Exclusive = v
	if v == ExclusiveNode {
		// One field with --oversubscribe: the later decides.
		b.req.Oversubscribe = false
	}
	return nil
}

func applySwitches(b *builder, s setting) error {
	n, wait, err := ParseSwitches(s.value)
	if err != nil {
		return err
	}
	b.req.Switches = n
	if wait > 0 {
		b.req.SwitchWait = Duration(wait)
		b.req.Sources["switchWait"] = s.source
	}
	return nil
}

func applyWait4Switch(b *builder, s setting) error {
	d, err := ParseDuration(s.value)
	if err != nil {
		return err
	}
	if d < 0 {
		return reason("must be finite")
	}
	b.req.SwitchWait = Duration(d)
	return nil
}

// applyHosts expands a -w/-x value; a value containing '/' names a file
// of host expressions, read through ParseOptions.ReadFile.
func applyHosts(set func(*Request, []string)) func(*builder, setting) error {
	return func(b *builder, s setting) error {
		expr := s.value
		if strings.Contains(expr, "/") {
			if b.opts.ReadFile == nil {
				return reason("node list files cannot be read here")
			}
			data, err := b.opts.ReadFile(expr)
			if err != nil {
				return err
			}
			expr = string(data)
		}
		hosts, err := ExpandHostlist(expr)
		if err != nil {
			return err
		}
		if len(hosts) == 0 {
			return reason("no hosts")
		}
		slices.Sort(hosts)
		set(b.req, slices.Compact(hosts))
		return nil
	}
}

func applyArray(b *builder, s setting) error {
	a, err := ParseArray(s.value, b.opts.maxArraySize()-1)
	if err != nil {
		return err
	}
	b.req.Array = a
	return nil
}

// applyDependency keeps the text: sbatch passes --dependency on as given
// and only the last value is checked (anchor: "#SBATCH -d bogus" with
// --dependency=singleton on the command line was taken), in resolveDependency.
func applyDependency(b *builder, s setting) error {
	b.dependency = s
	return nil
}

func (b *builder) resolveDependency() error {
	s := b.dependency
	if _, set := b.req.Sources["dependency"]; !set || s.spec == nil {
		return nil // never given, or emptied later (--dependency=)
	}
	d, err := ParseDependency(s.value)
	if err != nil {
		return optionErr(s, err)
	}
	b.req.Dependency = d
	return nil
}

func applyAbsTime(field func(*Request) *time.Time) func(*builder, setting) error {
	return func(b *builder, s setting) error {
		t, err := ParseTime(s.value, b.opts.Now, b.opts.Location)
		if err != nil {
			return err
		}
		*field(b.req) = t
		return nil
	}
}

// applyNice checks syntax only: the controller owns the bounds (and who
// may go negative), so its words are the ones a user reads.
func applyNice(b *builder, s setting) error {
	if !s.hasValue {
		b.req.Nice = 100
		return nil
	}
	v := strings.TrimSpace(s.value)
	neg := strings.HasPrefix(v, "-")
	n, err := parseCount(strings.TrimPrefix(strings.TrimPrefix(v, "-"), "+"))
	if err != nil {
		return reason("expected an integer")
	}
	if neg {
		n = -n
	}
	b.req.Nice = n
	return nil
}

// applyRequeue reads --requeue[=expedite]: plain, the job may be
// requeued; expedite is Slurm 25.11's expedited requeue (the release
// notes' and SchedMD's own tests' spelling), a job hit by a hardware
// fault restarts at once ahead of every other pending job. Slurm 22.05
// takes no value at all; Parity follows 25.11 here, case-insensitively
// as Slurm compares keyword values.
func applyRequeue(b *builder, s setting) error {
	switch strings.ToLower(s.value) {
	case "":
		b.req.Requeue, b.req.RequeueExpedite = true, false
	case "expedite":
		b.req.Requeue, b.req.RequeueExpedite = true, true
	case "expedited":
		// The 25.11 sbatch man page writes --requeue[=expedited]; the
		// option itself reads expedite.
		return reason("the value is expedite (--requeue=expedite), not expedited")
	default:
		return reason("the only value allowed is expedite (--requeue=expedite, Slurm 25.11's expedited requeue); plain --requeue takes none")
	}
	return nil
}

func applySignal(b *builder, s setting) error {
	sig, err := ParseSignal(s.value)
	if err != nil {
		return err
	}
	b.req.Signal = &sig
	return nil
}

func applyNoKill(b *builder, s setting) error {
	switch strings.ToLower(s.value) {
	case "":
		b.req.NoKill = true
	case "off":
		b.req.NoKill = false
	default:
		return reason("the only value allowed is off")
	}
	return nil
}

func applyOpenMode(b *builder, s setting) error {
	switch v := strings.ToLower(strings.TrimSpace(s.value)); {
	case v == "a" || v == OpenAppend:
		b.req.OpenMode = OpenAppend
	case v == "t" || v == OpenTruncate:
		b.req.OpenMode = OpenTruncate
	default:
		return reason("expected append or truncate")
	}
	return nil
}

func applyExport(b *builder, s setting) error {
	e, err := ParseExport(s.value)
	if err != nil {
		return err
	}
	b.req.Export = e
	return nil
}

// applyGetUserEnv accepts --get-user-env[=timeout][S|L].
func applyGetUserEnv(b *builder, s setting) error {
	v := strings.TrimSpace(s.value)
	body := strings.TrimRight(v, "SLsl")
	if len(v)-len(body) > 1 || leadingDigits(body) != body {
		return reason("expected [timeout][S|L]")
	}
	b.req.GetUserEnv, b.req.GetUserEnvArg = true, v
	return nil
}

var mailTypes = [...]string{"NONE", "BEGIN", "END", "FAIL", "REQUEUE", "ALL", "INVALID_DEPEND", "STAGE_OUT",
	"TIME_LIMIT", "TIME_LIMIT_90", "TIME_LIMIT_80", "TIME_LIMIT_50", "ARRAY_TASKS"}

// applyMailType adds the types to those already given: sbatch ORs every
// --mail-type it reads (script, environment, command line) into one set,
// so --mail-type=END on the command line keeps a directive's BEGIN.
func applyMailType(b *builder, s setting) error {
	out := b.req.MailType
	for _, it := range strings.Split(strings.ToUpper(s.value), ",") {
		it = strings.TrimSpace(it)
		if !slices.Contains(mailTypes[:], it) {
			return reason("unknown mail type " + it + " (want " + strings.Join(mailTypes[:], ", ") + ")")
		}
		if !slices.Contains(out, it) {
			out = append(out, it)
		}
	}
	b.req.MailType = out
	return nil
}
