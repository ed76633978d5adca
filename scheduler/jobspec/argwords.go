package jobspec

import "strings"

// ArgWords reports how many words of args the sbatch option at args[0]
// takes as Parse reads them: 1 for a flag or an option with an attached
// value, 2 when the value is the next word, 0 when args[0] is not an option
// (the script path, "-" or "--"). A word that is not a known option counts
// as 1, so Parse reports it. Callers that mix their own options into an
// sbatch command line use it to find where the script begins without
// misreading an option's value as the script.
func ArgWords(args []string) int { return ArgWordsFunc()(args) }

// ArgWordsFunc is ArgWords with sbatch's option table built once, for a
// caller that walks a whole command line word by word.
func ArgWordsFunc() func(args []string) int {
	table := newOptionTable(sbatchOptions())
	return func(args []string) int { return argWords(table, args) }
}

func argWords(table *optionTable, args []string) int {
	if len(args) == 0 {
		return 0
	}
	w := args[0]
	if w == "--" || w == "-" || !strings.HasPrefix(w, "-") {
		return 0
	}
	if strings.HasPrefix(w, "--") {
		name, _, attached := strings.Cut(w[2:], "=")
		spec, err := table.lookupLong(name)
		if err != nil || attached || spec.arg != requiredArg || len(args) < 2 {
			return 1
		}
		return 2
	}
	for j := 1; j < len(w); j++ {
		spec := table.byShort[w[j]]
		switch {
		case spec == nil:
			return 1
		case spec.arg == requiredArg:
			if j+1 < len(w) || len(args) < 2 {
				return 1
			}
			return 2
		}
	}
	return 1
}

// LongOptionsWithPrefix lists the sbatch options (by their long name)
// that the long option "--"+prefix could abbreviate, as getopt_long
// matches them: the option alone when prefix is a full name or alias.
// srun and salloc use it to tell an abbreviation of one of their own
// options from an ambiguous one.
func LongOptionsWithPrefix(prefix string) []string {
	table := newOptionTable(sbatchOptions())
	if s := table.byLong[prefix]; s != nil {
		return []string{s.long}
	}
	var out []string
	for _, s := range table.specs {
		if prefix != "" && !s.envOnly && !s.exactOnly && s.hasPrefix(prefix) {
			out = append(out, s.long)
		}
	}
	return out
}
