package jobspec

import (
	"strconv"
	"strings"
)

// NoArrayTaskID is what %a expands to outside an array (Slurm's NO_VAL).
const NoArrayTaskID = 4294967294

// maxPad caps the zero-padding width of %Nj, as Slurm does.
const maxPad = 10

// Vars are the values an output pattern may reference.
type Vars struct {
	JobID uint64 // %j
	// ArrayJobID is %A; 0 outside an array, where %A is the job id.
	ArrayJobID uint64
	// ArrayTaskID is %a (and %b = %a mod 10) when InArray.
	ArrayTaskID  uint32
	InArray      bool
	StepID       string // %s and the step part of %J; "" means the batch step
	JobName      string // %x
	User         string // %u
	NodeName     string // %N, short host name
	NodeIndex    int    // %n, node index within the job
	TaskID       int    // %t, task rank
	RestartCount int    // %r
	SLUID        string // %S
}

// Expand substitutes Slurm's filename tokens in pattern: %% %A %a %b %j %J
// %s %N %n %t %u %x %r %S, with an optional zero-padding width between %
// and the letter (%5j, capped at 10, ignored for text tokens). Unknown
// tokens are kept as written. A pattern containing a backslash is not
// expanded at all; its backslashes are removed.
func Expand(pattern string, v Vars) string {
	if strings.ContainsRune(pattern, '\\') {
		return strings.ReplaceAll(pattern, "\\", "")
	}
	var b strings.Builder
	for i := 0; i < len(pattern); i++ {
		c := pattern[i]
		if c != '%' || i+1 >= len(pattern) {
			b.WriteByte(c)
			continue
		}
		j := i + 1
		for j < len(pattern) && isDigit(pattern[j]) {
			j++
		}
		if j >= len(pattern) {
			b.WriteString(pattern[i:])
			break
		}
		width := min(atoi(pattern[i+1:j]), maxPad)
		if width < 0 {
			width = maxPad
		}
		if out, ok := v.token(pattern[j], width); ok {
			b.WriteString(out)
		} else {
			b.WriteString(pattern[i : j+1])
		}
		i = j
	}
	return b.String()
}

func pad(n uint64, width int) string {
	s := strconv.FormatUint(n, 10)
	if len(s) < width {
		s = strings.Repeat("0", width-len(s)) + s
	}
	return s
}

func (v Vars) token(c byte, width int) (string, bool) {
	task := uint64(NoArrayTaskID)
	if v.InArray {
		task = uint64(v.ArrayTaskID)
	}
	switch c {
	case '%':
		return "%", true
	case 'A':
		if v.InArray && v.ArrayJobID != 0 {
			return pad(v.ArrayJobID, width), true
		}
		return pad(v.JobID, width), true
	case 'a':
		return pad(task, width), true
	case 'b':
		return pad(task%10, width), true
	case 'j':
		return pad(v.JobID, width), true
	case 'J':
		if _, err := strconv.ParseUint(v.StepID, 10, 32); err == nil {
			return pad(v.JobID, width) + "." + v.StepID, true
		}
		return pad(v.JobID, width), true
	case 's':
		if v.StepID == "" {
			return "batch", true
		}
		if n, err := strconv.ParseUint(v.StepID, 10, 32); err == nil {
			return pad(n, width), true
		}
		return v.StepID, true
	case 'N':
		return v.NodeName, true
	case 'n':
		return pad(uint64(max(v.NodeIndex, 0)), width), true
	case 't':
		return pad(uint64(max(v.TaskID, 0)), width), true
	case 'u':
		return v.User, true
	case 'x':
		return v.JobName, true
	case 'r':
		return pad(uint64(max(v.RestartCount, 0)), width), true
	case 'S':
		return v.SLUID, true
	}
	return "", false
}

// PatternPerNode reports whether a pattern names one file per node or per
// task (%N, %n, %t), which a batch step opens only on its first node.
func PatternPerNode(pattern string) bool {
	if strings.ContainsRune(pattern, '\\') {
		return false
	}
	for i := 0; i+1 < len(pattern); i++ {
		if pattern[i] != '%' {
			continue
		}
		j := i + 1
		for j < len(pattern) && isDigit(pattern[j]) {
			j++
		}
		if j < len(pattern) && strings.IndexByte("Nnt", pattern[j]) >= 0 {
			return true
		}
		i = j
	}
	return false
}
