package jobspec

// memKinds are the three exclusive memory options, in the order Slurm's
// messages name them.
var memKinds = [...]MemPer{MemPerNode, MemPerCPU, MemPerGPU}

// memSetting is the last value one memory option was given and where.
type memSetting struct {
	mb     int64
	source string
	env    bool // from an SBATCH_* variable
}

// applyMem records one of the three exclusive memory options; which one
// the job gets is resolveMem's, once every source is read.
func applyMem(per MemPer) func(*builder, setting) error {
	return func(b *builder, s setting) error {
		mb, err := ParseMemory(s.value)
		if err != nil {
			return err
		}
		if per != MemPerNode && mb == 0 {
			return reason("must be greater than 0")
		}
		if b.mem == nil {
			b.mem = map[MemPer]memSetting{}
		}
		b.mem[per] = memSetting{mb: mb, source: s.source, env: s.level == levelEnv}
		return nil
	}
}

// resolveMem picks the job's memory option as sbatch 22.05 does after
// reading the script, then SBATCH_* (which replace a directive's value of
// the same option) and the command line: two kinds given in the script or
// on the command line are refused; one given there wins over any kind from
// SBATCH_* (SBATCH_MEM_PER_GPU beside "#SBATCH --mem=0" is dropped); two
// kinds only from SBATCH_* are refused. Each was seen on the anchor.
func (b *builder) resolveMem() error {
	var given, fromEnv []MemPer
	for _, k := range memKinds {
		if m, ok := b.mem[k]; ok && m.env {
			fromEnv = append(fromEnv, k)
		} else if ok {
			given = append(given, k)
		}
	}
	pick := given
	if len(given) == 0 {
		pick = fromEnv
	}
	switch {
	case len(pick) == 0:
		return nil
	case len(pick) > 1:
		last := b.mem[pick[len(pick)-1]]
		why := "--mem, --mem-per-cpu and --mem-per-gpu are mutually exclusive"
		if len(given) == 0 {
			why = "SBATCH_MEM_PER_NODE, SBATCH_MEM_PER_CPU and SBATCH_MEM_PER_GPU are mutually exclusive"
		}
		return &OptionError{Option: memOption(pick[len(pick)-1]), Value: FormatMemory(last.mb), Source: last.source,
			Reason: why + " (" + memOption(pick[0]) + " is also given, " + b.mem[pick[0]].source + ")"}
	}
	m := b.mem[pick[0]]
	b.req.Mem, b.req.Sources["mem"] = Memory{Per: pick[0], MB: m.mb}, m.source
	return nil
}

func memOption(p MemPer) string {
	if p == MemPerNode {
		return "--mem"
	}
	return "--mem-per-" + string(p)
}
