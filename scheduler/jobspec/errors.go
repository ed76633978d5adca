package jobspec

import (
	"errors"
	"fmt"
)

// ErrInvalid is wrapped by every error this package returns for bad input.
var ErrInvalid = errors.New("jobspec: invalid")

// SyntaxError reports a value one of the grammars rejected. What names the
// grammar ("duration", "hostlist", ...); Value is the whole input.
type SyntaxError struct {
	What   string
	Value  string
	Reason string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("invalid %s %q: %s", e.What, e.Value, e.Reason)
}

// Unwrap makes errors.Is(err, ErrInvalid) hold.
func (e *SyntaxError) Unwrap() error { return ErrInvalid }

func syntaxErr(what, value, format string, args ...any) error {
	return &SyntaxError{What: what, Value: value, Reason: fmt.Sprintf(format, args...)}
}

// OptionError reports an option whose value is wrong, or an option that may
// not be used as given. Source says where the value came from ("#SBATCH line
// 4", "SBATCH_TIMELIMIT", "command line").
type OptionError struct {
	Option string // "--time"
	Value  string
	Source string
	Reason string // what is wrong; Err's message when empty
	Err    error  // the grammar's error, if any
}

func (e *OptionError) Error() string {
	msg := e.Reason
	if msg == "" && e.Err != nil {
		msg = e.Err.Error()
	}
	src := ""
	if e.Source != "" {
		src = " (" + e.Source + ")"
	}
	if e.Value == "" {
		return fmt.Sprintf("%s%s: %s", e.Option, src, msg)
	}
	return fmt.Sprintf("%s=%q%s: %s", e.Option, e.Value, src, msg)
}

// Unwrap returns both the grammar error and ErrInvalid.
func (e *OptionError) Unwrap() []error {
	if e.Err != nil {
		return []error{e.Err, ErrInvalid}
	}
	return []error{ErrInvalid}
}

// DirectiveError reports a #SBATCH line sbatch would refuse; the message
// starts as Slurm's does so users recognise it.
type DirectiveError struct {
	Line   int
	Text   string // the directive line as written
	Option string // the offending option or word, if known
	Reason string
}

func (e *DirectiveError) Error() string {
	if e.Option != "" {
		return fmt.Sprintf("Invalid directive found in batch script: %s (line %d: %s)", e.Option, e.Line, e.Reason)
	}
	return fmt.Sprintf("Invalid directive found in batch script (line %d: %s)", e.Line, e.Reason)
}

// Unwrap makes errors.Is(err, ErrInvalid) hold.
func (e *DirectiveError) Unwrap() error { return ErrInvalid }
