package sbatch

import "strings"

// Voice is how a command words its messages: Parity's own ("parity:
// submit: ...") or, invoked under a Slurm name, that command's as Slurm
// words them ("sbatch: error: ...", "sbatch: warning: ...").
type Voice struct {
	// Slurm is the Slurm command name the binary was invoked as; "" for
	// parity's own verbs.
	Slurm string
}

// Error is the line that reports err from verb, whose messages start
// with "verb: ".
func (v Voice) Error(verb string, err error) string {
	if v.Slurm == "" {
		return "parity: " + err.Error()
	}
	return v.Slurm + ": error: " + strings.TrimPrefix(err.Error(), verb+": ")
}

// Warning is the line that warns of msg from verb.
func (v Voice) Warning(verb, msg string) string {
	if v.Slurm == "" {
		return "parity: " + verb + ": warning: " + msg
	}
	return v.Slurm + ": warning: " + msg
}
