package jobspec

import (
	"strings"
	"time"
)

// optionSpec describes one sbatch option: its names, whether it takes a
// value, the SBATCH_* variable that mirrors it, the Request field (JSON
// name) it sets, and how to apply a value.
type optionSpec struct {
	long  string
	short byte
	arg   argKind
	env   string
	field string
	// aliases are other long names sbatch gives the option
	// (--tasks-per-node for --ntasks-per-node).
	aliases []string
	// envOnly options have no command-line spelling (SBATCH_WAIT4SWITCH).
	envOnly bool
	// exactOnly options are Parity's own (--parse-only): not abbreviated.
	exactOnly bool
	// envValue passes an SBATCH_* value to a flag (SBATCH_DEBUG=2).
	envValue bool
	// unset, when set, is what an empty value does: Slurm stores "" for
	// these options and treats it as never given (--qos=, --exclude=).
	unset func(r *Request)
	apply func(b *builder, s setting) error
}

// sbatchOptions builds the option table; built per parse so no table is
// shared mutable state.
func sbatchOptions() []*optionSpec {
	specs := []*optionSpec{
		{long: "job-name", short: 'J', arg: requiredArg, env: "SBATCH_JOB_NAME", field: "name", apply: setText(func(r *Request, v string) { r.Name = v })},
		{long: "account", short: 'A', arg: requiredArg, env: "SBATCH_ACCOUNT", field: "account", unset: func(r *Request) { r.Account = "" }, apply: setText(func(r *Request, v string) { r.Account = v })},
		{long: "partition", short: 'p', arg: requiredArg, env: "SBATCH_PARTITION", field: "partitions", apply: setList(func(r *Request, v []string) { r.Partitions = v })},
		{long: "qos", short: 'q', arg: requiredArg, env: "SBATCH_QOS", field: "qos", unset: func(r *Request) { r.QOS = nil }, apply: setList(func(r *Request, v []string) { r.QOS = v })},
		{long: "reservation", arg: requiredArg, env: "SBATCH_RESERVATION", field: "reservations", unset: func(r *Request) { r.Reservations = nil }, apply: setList(func(r *Request, v []string) { r.Reservations = v })},
		{long: "nodes", short: 'N', arg: requiredArg, field: "nodes", apply: applyNodes},
		{long: "ntasks", short: 'n', arg: requiredArg, field: "ntasks", apply: setPositive(func(r *Request, n int) { r.NTasks = n })},
		{long: "ntasks-per-node", aliases: []string{"tasks-per-node"}, arg: requiredArg, field: "ntasksPerNode", apply: setPositive(func(r *Request, n int) { r.NTasksPerNode = n })},
		{long: "cpus-per-task", short: 'c', arg: requiredArg, field: "cpusPerTask", apply: setPositive(func(r *Request, n int) { r.CPUsPerTask = n })},
		{long: "mem", arg: requiredArg, env: "SBATCH_MEM_PER_NODE", field: "mem", apply: applyMem(MemPerNode)},
		{long: "mem-per-cpu", arg: requiredArg, env: "SBATCH_MEM_PER_CPU", field: "mem", apply: applyMem(MemPerCPU)},
		{long: "mem-per-gpu", arg: requiredArg, env: "SBATCH_MEM_PER_GPU", field: "mem", apply: applyMem(MemPerGPU)},
		{long: "time", short: 't', arg: requiredArg, env: "SBATCH_TIMELIMIT", field: "timeLimit", apply: applyTime},
		{long: "time-min", arg: requiredArg, field: "timeMin", apply: applyTimeMin},
		{long: "gres", arg: requiredArg, env: "SBATCH_GRES", field: "gres", apply: setText(func(r *Request, v string) { r.GPU.GRES = v })},
		{long: "gpus", short: 'G', arg: requiredArg, env: "SBATCH_GPUS", field: "gpus", apply: setText(func(r *Request, v string) { r.GPU.GPUs = v })},
		{long: "gpus-per-node", arg: requiredArg, env: "SBATCH_GPUS_PER_NODE", field: "gpusPerNode", apply: setText(func(r *Request, v string) { r.GPU.GPUsPerNode = v })},
		{long: "gpus-per-task", arg: requiredArg, env: "SBATCH_GPUS_PER_TASK", field: "gpusPerTask", apply: setText(func(r *Request, v string) { r.GPU.GPUsPerTask = v })},
		{long: "gpu-bind", arg: requiredArg, env: "SBATCH_GPU_BIND", field: "gpuBind", apply: applyGPUBind},
		{long: "gpus-per-socket", arg: requiredArg, field: "gpusPerSocket", apply: setText(func(r *Request, v string) { r.GPU.GPUsPerSocket = v })},
		{long: "cpus-per-gpu", arg: requiredArg, env: "SBATCH_CPUS_PER_GPU", field: "cpusPerGpu", apply: setPositive(func(r *Request, n int) { r.CPUsPerGPU = n })},
		{long: "ntasks-per-gpu", arg: requiredArg, field: "ntasksPerGpu", apply: setPositive(func(r *Request, n int) { r.NTasksPerGPU = n })},
		{long: "gres-flags", arg: requiredArg, env: "SBATCH_GRES_FLAGS", field: "gresFlags", apply: applyGRESFlags},
		{long: "constraint", short: 'C', arg: requiredArg, env: "SBATCH_CONSTRAINT", field: "constraint", unset: func(r *Request) { r.Constraint = nil }, apply: applyConstraint},
		{long: "exclusive", arg: optionalArg, env: "SBATCH_EXCLUSIVE", field: "exclusive", apply: applyExclusive},
		{long: "oversubscribe", short: 's', arg: noArg, field: "oversubscribe", apply: applyOversubscribe},
		{long: "contiguous", arg: noArg, field: "contiguous", apply: setFlag(func(r *Request) { r.Contiguous = true })},
		{long: "switches", arg: requiredArg, env: "SBATCH_REQ_SWITCH", field: "switches", apply: applySwitches},
		{long: "wait4switch", arg: requiredArg, env: "SBATCH_WAIT4SWITCH", envOnly: true, field: "switchWait", apply: applyWait4Switch},
		{long: "nodelist", short: 'w', arg: requiredArg, field: "nodeList", unset: func(r *Request) { r.NodeList = nil }, apply: applyHosts(func(r *Request, h []string) { r.NodeList = h })},
		{long: "exclude", short: 'x', arg: requiredArg, field: "exclude", unset: func(r *Request) { r.Exclude = nil }, apply: applyHosts(func(r *Request, h []string) { r.Exclude = h })},
		{long: "array", short: 'a', arg: requiredArg, env: "SBATCH_ARRAY_INX", field: "array", apply: applyArray},
		{long: "dependency", short: 'd', arg: requiredArg, field: "dependency", unset: func(r *Request) { r.Dependency = nil }, apply: applyDependency},
		{long: "kill-on-invalid-dep", arg: requiredArg, field: "killOnInvalidDep", apply: applyKillOnInvalidDep},
		{long: "begin", short: 'b', arg: requiredArg, field: "begin", apply: applyAbsTime(func(r *Request) *time.Time { return &r.Begin })},
		{long: "deadline", arg: requiredArg, field: "deadline", apply: applyAbsTime(func(r *Request) *time.Time { return &r.Deadline })},
		{long: "nice", arg: optionalArg, field: "nice", apply: applyNice},
		{long: "hold", short: 'H', arg: noArg, field: "hold", apply: setFlag(func(r *Request) { r.Hold = true })},
		{long: "requeue", arg: optionalArg, env: "SBATCH_REQUEUE", field: "requeue", apply: applyRequeue},
		{long: "no-requeue", arg: noArg, env: "SBATCH_NO_REQUEUE", field: "requeue", apply: setFlag(func(r *Request) { r.Requeue, r.RequeueExpedite = false, false })},
		{long: "signal", arg: requiredArg, env: "SBATCH_SIGNAL", field: "signal", apply: applySignal},
		{long: "no-kill", short: 'k', arg: optionalArg, env: "SBATCH_NO_KILL", field: "noKill", apply: applyNoKill},
		{long: "output", short: 'o', arg: requiredArg, env: "SBATCH_OUTPUT", field: "output", apply: setText(func(r *Request, v string) { r.Output = v })},
		{long: "error", short: 'e', arg: requiredArg, env: "SBATCH_ERROR", field: "error", apply: setText(func(r *Request, v string) { r.Error = v })},
		{long: "input", short: 'i', arg: requiredArg, env: "SBATCH_INPUT", field: "input", apply: setText(func(r *Request, v string) { r.Input = v })},
		{long: "open-mode", arg: requiredArg, env: "SBATCH_OPEN_MODE", field: "openMode", apply: applyOpenMode},
		{long: "chdir", short: 'D', arg: requiredArg, field: "workDir", apply: setText(func(r *Request, v string) { r.WorkDir = v })},
		{long: "export", arg: requiredArg, env: "SBATCH_EXPORT", field: "export", apply: applyExport},
		{long: "get-user-env", arg: optionalArg, env: "SBATCH_GET_USER_ENV", field: "getUserEnv", apply: applyGetUserEnv},
		{long: "mail-type", arg: requiredArg, field: "mailType", apply: applyMailType},
		{long: "mail-user", arg: requiredArg, field: "mailUser", apply: setText(func(r *Request, v string) { r.MailUser = v })},
		{long: "clusters", aliases: []string{"cluster"}, short: 'M', arg: requiredArg, env: "SBATCH_CLUSTERS", field: "clusters",
			apply: setList(func(r *Request, v []string) { r.Clusters = v })},
		{long: "comment", arg: requiredArg, field: "comment", apply: func(b *builder, s setting) error { b.req.Comment = s.value; return nil }},
		{long: "parsable", arg: noArg, field: "parsable", apply: setFlag(func(r *Request) { r.Parsable = true })},
		{long: "test-only", arg: noArg, field: "testOnly", apply: setFlag(func(r *Request) { r.TestOnly = true })},
		{long: "parse-only", exactOnly: true, arg: noArg, field: "parseOnly", apply: setFlag(func(r *Request) { r.ParseOnly = true })},
		{long: "wait", short: 'W', arg: noArg, env: "SBATCH_WAIT", field: "wait", apply: setFlag(func(r *Request) { r.Wait = true })},
		{long: "quiet", short: 'Q', arg: noArg, field: "quiet", apply: setFlag(func(r *Request) { r.Quiet = true })},
		{long: "verbose", short: 'v', arg: noArg, env: "SBATCH_DEBUG", envValue: true, field: "verbose", apply: applyVerbose},
		{long: "wrap", arg: requiredArg, field: "wrap", apply: applyWrap},
	}
	return append(specs, extraOptions()...)
}

// extraOptions are real sbatch options Parity accepts so existing scripts
// submit, records in Request.Extra and does not interpret (yet).
func extraOptions() []*optionSpec {
	type ex struct {
		long  string
		short byte
		arg   argKind
		env   string
	}
	aliases := map[string][]string{}
	list := []ex{
		{"licenses", 'L', requiredArg, ""}, {"wckey", 0, requiredArg, "SBATCH_WCKEY"}, {"tmp", 0, requiredArg, ""},
		{"mincpus", 0, requiredArg, ""}, {"hint", 0, requiredArg, "SBATCH_HINT"}, {"distribution", 'm', requiredArg, "SBATCH_DISTRIBUTION"},
		{"overcommit", 'O', noArg, "SBATCH_OVERCOMMIT"}, {"prefer", 0, requiredArg, ""},
		{"gpu-freq", 0, requiredArg, "SBATCH_GPU_FREQ"}, {"tres-bind", 0, requiredArg, "SBATCH_TRES_BIND"},
		{"tres-per-task", 0, requiredArg, "SBATCH_TRES_PER_TASK"}, {"priority", 0, requiredArg, ""},
		{"spread-job", 0, noArg, "SBATCH_SPREAD_JOB"}, {"use-min-nodes", 0, noArg, "SBATCH_USE_MIN_NODES"},
		{"segment", 0, requiredArg, "SBATCH_SEGMENT_SIZE"}, {"extra-node-info", 'B', requiredArg, ""},
		{"cpu-freq", 0, requiredArg, ""}, {"threads-per-core", 0, requiredArg, "SBATCH_THREADS_PER_CORE"},
		{"ntasks-per-socket", 0, requiredArg, ""}, {"ntasks-per-core", 0, requiredArg, ""},
		{"sockets-per-node", 0, requiredArg, ""}, {"cores-per-socket", 0, requiredArg, ""},
		{"delay-boot", 0, requiredArg, "SBATCH_DELAY_BOOT"}, {"profile", 0, requiredArg, "SBATCH_PROFILE"},
		{"acctg-freq", 0, requiredArg, "SBATCH_ACCTG_FREQ"}, {"network", 0, requiredArg, "SBATCH_NETWORK"},
		{"mem-bind", 0, requiredArg, "SBATCH_MEM_BIND"}, {"container", 0, requiredArg, "SBATCH_CONTAINER"},
		{"container-id", 0, requiredArg, "SBATCH_CONTAINER_ID"}, {"core-spec", 'S', requiredArg, "SBATCH_CORE_SPEC"},
		{"thread-spec", 0, requiredArg, "SBATCH_THREAD_SPEC"},
		{"cluster-constraint", 0, requiredArg, ""}, {"ignore-pbs", 0, noArg, "SBATCH_IGNORE_PBS"},
		{"power", 0, requiredArg, "SBATCH_POWER"}, {"export-file", 0, requiredArg, ""}, {"mcs-label", 0, requiredArg, ""},
		{"batch", 0, requiredArg, "SBATCH_BATCH"}, {"wait-all-nodes", 0, requiredArg, "SBATCH_WAIT_ALL_NODES"},
		{"propagate", 0, optionalArg, ""}, {"reboot", 0, noArg, ""}, {"nodefile", 'F', requiredArg, ""},
		{"bb", 0, requiredArg, ""}, {"bbf", 0, requiredArg, ""},
	}
	out := make([]*optionSpec, len(list))
	for i, e := range list {
		out[i] = &optionSpec{long: e.long, aliases: aliases[e.long], short: e.short, arg: e.arg, env: e.env, field: "extra." + e.long, apply: applyExtra}
	}
	return out
}

func setText(set func(*Request, string)) func(*builder, setting) error {
	return func(b *builder, s setting) error {
		if strings.TrimSpace(s.value) == "" {
			return reason("must not be empty")
		}
		set(b.req, s.value)
		return nil
	}
}

func setList(set func(*Request, []string)) func(*builder, setting) error {
	return func(b *builder, s setting) error {
		var items []string
		for _, it := range strings.Split(s.value, ",") {
			it = strings.TrimSpace(it)
			if it == "" {
				return reason("empty name in list")
			}
			items = append(items, it)
		}
		set(b.req, items)
		return nil
	}
}

func setPositive(set func(*Request, int)) func(*builder, setting) error {
	return func(b *builder, s setting) error {
		n, err := parseCount(s.value)
		if err != nil {
			return reason("expected a positive integer")
		}
		if n < 1 {
			return reason("must be at least 1")
		}
		set(b.req, n)
		return nil
	}
}

func setFlag(set func(*Request)) func(*builder, setting) error {
	return func(b *builder, _ setting) error {
		set(b.req)
		return nil
	}
}

func applyYesNo(set func(*Request, bool)) func(*builder, setting) error {
	return func(b *builder, s setting) error {
		switch strings.ToLower(strings.TrimSpace(s.value)) {
		case "yes":
			set(b.req, true)
		case "no":
			set(b.req, false)
		default:
			return reason("expected yes or no")
		}
		return nil
	}
}

func applyExtra(b *builder, s setting) error {
	if b.req.Extra == nil {
		b.req.Extra = map[string]string{}
	}
	b.req.Extra[s.spec.long] = s.value
	b.warnf("--%s is accepted but not enforced by Parity", s.spec.long)
	return nil
}

func applyVerbose(b *builder, s setting) error {
	if !s.hasValue {
		b.req.Verbose++
		return nil
	}
	n, err := parseCount(s.value)
	if err != nil {
		return reason("expected a verbosity level")
	}
	b.req.Verbose = n
	return nil
}

func applyWrap(b *builder, s setting) error {
	if s.level == levelDirective {
		return reason("--wrap cannot be used inside a batch script")
	}
	return setText(func(r *Request, v string) { r.Wrap = v })(b, s)
}
