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
