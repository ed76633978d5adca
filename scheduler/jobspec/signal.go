package jobspec

import (
	"strconv"
	"strings"
	"time"
)

// signalNames are the Linux signal numbers by name; names are data here so
// the package stays portable and free of syscall.
var signalNames = [...]string{1: "HUP", 2: "INT", 3: "QUIT", 4: "ILL", 5: "TRAP", 6: "ABRT", 7: "BUS", 8: "FPE",
	9: "KILL", 10: "USR1", 11: "SEGV", 12: "USR2", 13: "PIPE", 14: "ALRM", 15: "TERM", 16: "STKFLT", 17: "CHLD",
	18: "CONT", 19: "STOP", 20: "TSTP", 21: "TTIN", 22: "TTOU", 23: "URG", 24: "XCPU", 25: "XFSZ", 26: "VTALRM",
	27: "PROF", 28: "WINCH", 29: "IO", 30: "PWR", 31: "SYS"}

// Signal limits: numbers 1-64 (real-time signals included), lead time up to
// 65535 seconds, 60 by default.
const (
	maxSignal         = 64
	maxSignalLead     = 65535
	DefaultSignalLead = 60 * time.Second
)

// Signal is a parsed --signal=[{R|B}:]sig[@time] value.
type Signal struct {
	// Batch (B:) sends the signal to the batch shell only, not the steps.
	Batch bool
	// Reservation (R:) lets the job overlap a reservation with MaxStartDelay.
	Reservation bool
	Number      int
	// Lead is how long before the time limit the signal is sent.
	Lead time.Duration
}

// ParseSignal reads --signal: an optional R:, B: or RB: prefix, a signal
// name (USR1, SIGUSR1, any case) or number, and an optional @seconds lead
// time (0-65535, default 60).
func ParseSignal(s string) (Signal, error) {
	v := strings.TrimSpace(s)
	var sig Signal
	if flags, rest, ok := strings.Cut(v, ":"); ok {
		if flags == "" || strings.Trim(strings.ToUpper(flags), "RB") != "" {
			return Signal{}, syntaxErr("signal", s, "prefix %q must be R:, B: or RB:", flags+":")
		}
		sig.Reservation = strings.ContainsAny(flags, "Rr")
		sig.Batch = strings.ContainsAny(flags, "Bb")
		v = rest
	}
	name, lead, hasLead := strings.Cut(v, "@")
	n, err := signalNumber(name)
	if err != nil {
		return Signal{}, syntaxErr("signal", s, "%v", err)
	}
	sig.Number, sig.Lead = n, DefaultSignalLead
	if hasLead {
		secs, err := parseCount(lead)
		if err != nil || secs > maxSignalLead {
			return Signal{}, syntaxErr("signal", s, "time %q must be 0-%d seconds", lead, maxSignalLead)
		}
		sig.Lead = time.Duration(secs) * time.Second
	}
	return sig, nil
}

func signalNumber(name string) (int, error) {
	if name != "" && leadingDigits(name) == name {
		n := atoi(name)
		if n < 1 || n > maxSignal {
			return 0, reason("signal number " + name + " is out of range 1-" + strconv.Itoa(maxSignal))
		}
		return n, nil
	}
	up := strings.TrimPrefix(strings.ToUpper(name), "SIG")
	for n, s := range signalNames {
		if s != "" && s == up {
			return n, nil
		}
	}
	if up == "POLL" {
		return 29, nil
	}
	return 0, reason("unknown signal " + strconv.Quote(name))
}

// Name is the signal's name without SIG ("USR1"), or its number when it has
// no name.
func (s Signal) Name() string {
	if s.Number > 0 && s.Number < len(signalNames) && signalNames[s.Number] != "" {
		return signalNames[s.Number]
	}
	return strconv.Itoa(s.Number)
}

// String renders the canonical form ("B:USR1@120"), which ParseSignal reads
// back to an equal Signal.
func (s Signal) String() string {
	prefix := ""
	if s.Reservation {
		prefix += "R"
	}
	if s.Batch {
		prefix += "B"
	}
	if prefix != "" {
		prefix += ":"
	}
	return prefix + s.Name() + "@" + strconv.Itoa(int(s.Lead/time.Second))
}

// MarshalText renders String.
func (s Signal) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText parses with ParseSignal.
func (s *Signal) UnmarshalText(b []byte) error {
	p, err := ParseSignal(string(b))
	if err != nil {
		return err
	}
	*s = p
	return nil
}
