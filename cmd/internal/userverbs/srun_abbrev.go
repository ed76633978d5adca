package userverbs

import (
	"slices"
	"strings"

	"github.com/parityhpc/parity/scheduler/jobspec"
)

// srunOwnLong are the long options srun and salloc read themselves (the
// sbatch-style ones go through jobspec).
var srunOwnLong = [...]string{"label", "unbuffered", "exact", "overlap", "pty", "help", "usage", "jobid"}

// expandOwnLong spells out an abbreviation of one of srun's (or
// salloc's) own long options, as getopt_long accepts any unambiguous
// prefix: --lab is --label. A prefix that also abbreviates an sbatch-style
// option is ambiguous, as srun says; one that names none of srun's own is
// returned unchanged for jobspec to read.
func expandOwnLong(verb, w string) (string, error) {
	if !strings.HasPrefix(w, "--") || w == "--" {
		return w, nil
	}
	name, value, attached := strings.Cut(w[2:], "=")
	own := srunOwnLong[:]
	if verb == "salloc" {
		own = append(slices.Clone(own), "kill-command")
	}
	if slices.Contains(own, name) {
		return w, nil
	}
	var mine []string
	for _, o := range own {
		if name != "" && strings.HasPrefix(o, name) {
			mine = append(mine, o)
		}
	}
	if len(mine) == 0 {
		return w, nil
	}
	all := append(mine, jobspec.LongOptionsWithPrefix(name)...)
	if len(all) > 1 {
		slices.Sort(all) // getopt_long's words, in sorted order as srun prints them
		return "", usageError(verb, "option '--%s' is ambiguous; possibilities: '--%s'", name, strings.Join(all, "' '--"))
	}
	if attached {
		return "--" + mine[0] + "=" + value, nil
	}
	return "--" + mine[0], nil
}
