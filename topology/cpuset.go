package topology

import (
	"errors"
	"fmt"
	"math/bits"
	"strconv"
	"strings"
)

// ErrCPUList reports a malformed Linux CPU list such as "0-3,8".
var ErrCPUList = errors.New("topology: invalid cpu list")

// maxCPU bounds parsed CPU ids so a hostile list cannot allocate gigabytes.
const maxCPU = 1 << 16

// CPUSet is an immutable set of logical CPU ids. The zero value is empty.
// Methods never modify the receiver; they return new sets.
type CPUSet struct {
	words []uint64
}

// NewCPUSet returns the set holding the given CPU ids.
func NewCPUSet(cpus ...int) CPUSet {
	var s CPUSet
	for _, c := range cpus {
		s = s.with(c)
	}
	return s
}

// CPURange returns the set [lo, hi].
func CPURange(lo, hi int) CPUSet {
	var s CPUSet
	for c := lo; c <= hi; c++ {
		s = s.with(c)
	}
	return s
}

func (s CPUSet) with(c int) CPUSet {
	w := c / 64
	words := make([]uint64, max(len(s.words), w+1))
	copy(words, s.words)
	words[w] |= 1 << (uint(c) % 64)
	return CPUSet{words: words}
}

// ParseCPUList parses the Linux list syntax used by cpuset.cpus, local_cpulist
// and taskset: comma-separated ids or inclusive ranges, e.g. "0-3,8,10-11".
// Surrounding whitespace and a trailing newline (as read from sysfs) are allowed.
func ParseCPUList(list string) (CPUSet, error) {
	list = strings.TrimSpace(list)
	if list == "" {
		return CPUSet{}, nil
	}
	var words []uint64
	for _, part := range strings.Split(list, ",") {
		lo, hi, err := parseCPURange(part)
		if err != nil {
			return CPUSet{}, fmt.Errorf("%w %q: %w", ErrCPUList, list, err)
		}
		if need := hi/64 + 1; need > len(words) {
			words = append(words, make([]uint64, need-len(words))...)
		}
		for c := lo; c <= hi; c++ {
			words[c/64] |= 1 << (uint(c) % 64)
		}
	}
	return CPUSet{words: words}, nil
}

func parseCPURange(part string) (lo, hi int, err error) {
	part = strings.TrimSpace(part)
	loStr, hiStr, isRange := strings.Cut(part, "-")
	if lo, err = parseCPUID(loStr); err != nil {
		return 0, 0, err
	}
	hi = lo
	if isRange {
		if hi, err = parseCPUID(hiStr); err != nil {
			return 0, 0, err
		}
		if hi < lo {
			return 0, 0, fmt.Errorf("range %q ends before it starts", part)
		}
	}
	return lo, hi, nil
}

func parseCPUID(s string) (int, error) {
	if s == "" {
		return 0, errors.New("empty cpu id")
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("cpu id %q is not a non-negative integer", s)
	}
	if n >= maxCPU {
		return 0, fmt.Errorf("cpu id %d exceeds the limit of %d", n, maxCPU-1)
	}
	return n, nil
}

// ParseCPUMask parses a sysfs hexadecimal mask ("ff,00000000", as in
// local_cpus), most significant 32-bit group first.
func ParseCPUMask(mask string) (CPUSet, error) {
	mask = strings.TrimSpace(mask)
	if mask == "" {
		return CPUSet{}, nil
	}
	groups := strings.Split(mask, ",")
	var s CPUSet
	for i, g := range groups {
		v, err := strconv.ParseUint(g, 16, 32)
		if err != nil {
			return CPUSet{}, fmt.Errorf("%w: mask %q group %q is not 32-bit hex", ErrCPUList, mask, g)
		}
		base := (len(groups) - 1 - i) * 32
		for b := 0; b < 32; b++ {
			if v&(1<<b) != 0 {
				s = s.with(base + b)
			}
		}
	}
	return s, nil
}

// Contains reports whether cpu is in the set.
func (s CPUSet) Contains(cpu int) bool {
	w := cpu / 64
	return cpu >= 0 && w < len(s.words) && s.words[w]&(1<<(uint(cpu)%64)) != 0
}

// Count returns the number of CPUs in the set.
func (s CPUSet) Count() int {
	n := 0
	for _, w := range s.words {
		n += bits.OnesCount64(w)
	}
	return n
}

// IsEmpty reports whether the set holds no CPU.
func (s CPUSet) IsEmpty() bool { return s.Count() == 0 }

// Union returns s ∪ o.
func (s CPUSet) Union(o CPUSet) CPUSet {
	a, b := s.words, o.words
	if len(a) < len(b) {
		a, b = b, a
	}
	out := make([]uint64, len(a))
	copy(out, a)
	for i, w := range b {
		out[i] |= w
	}
	return CPUSet{words: out}
}

// Intersect returns s ∩ o.
func (s CPUSet) Intersect(o CPUSet) CPUSet {
	n := min(len(s.words), len(o.words))
	out := make([]uint64, n)
	for i := range out {
		out[i] = s.words[i] & o.words[i]
	}
	return CPUSet{words: out}
}

// Difference returns s \ o.
func (s CPUSet) Difference(o CPUSet) CPUSet {
	out := make([]uint64, len(s.words))
	for i, w := range s.words {
		if i < len(o.words) {
			w &^= o.words[i]
		}
		out[i] = w
	}
	return CPUSet{words: out}
}

// Equal reports whether both sets hold the same CPUs.
func (s CPUSet) Equal(o CPUSet) bool {
	for i := 0; i < max(len(s.words), len(o.words)); i++ {
		var a, b uint64
		if i < len(s.words) {
			a = s.words[i]
		}
		if i < len(o.words) {
			b = o.words[i]
		}
		if a != b {
			return false
		}
	}
	return true
}

// CPUSetFromWords returns the set whose members are the set bits of words
// (bit i of word w is CPU w*64+i). The words are copied.
func CPUSetFromWords(words []uint64) CPUSet {
	n := len(words)
	for n > 0 && words[n-1] == 0 {
		n--
	}
	if n == 0 {
		return CPUSet{}
	}
	return CPUSet{words: append([]uint64(nil), words[:n]...)}
}

// Words returns the set as bit words (bit i of word w is CPU w*64+i), a
// copy the caller may change.
func (s CPUSet) Words() []uint64 { return append([]uint64(nil), s.words...) }

// WordLen is how many words the set spans: Word(i) is 0 from there on.
func (s CPUSet) WordLen() int { return len(s.words) }

// Word returns bits i*64 to i*64+63 of the set (0 past its end), for
// callers that intersect sets with bit words of their own.
func (s CPUSet) Word(i int) uint64 {
	if i < 0 || i >= len(s.words) {
		return 0
	}
	return s.words[i]
}

// List returns the CPU ids in ascending order.
func (s CPUSet) List() []int {
	out := make([]int, 0, s.Count())
	for i, w := range s.words {
		for w != 0 {
			b := bits.TrailingZeros64(w)
			out = append(out, i*64+b)
			w &^= 1 << uint(b)
		}
	}
	return out
}

// First returns the lowest n CPUs of the set (all of them if it has fewer).
func (s CPUSet) First(n int) CPUSet {
	list := s.List()
	if n < len(list) {
		list = list[:n]
	}
	return NewCPUSet(list...)
}

// String renders the set in Linux list syntax ("0-3,8"); the empty set is "".
func (s CPUSet) String() string {
	var b strings.Builder
	list := s.List()
	for i := 0; i < len(list); {
		j := i
		for j+1 < len(list) && list[j+1] == list[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(list[i]))
		if j > i {
			b.WriteByte('-')
			b.WriteString(strconv.Itoa(list[j]))
		}
		i = j + 1
	}
	return b.String()
}

// MarshalText renders the list syntax so sets read naturally in JSON and YAML.
func (s CPUSet) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText parses the list syntax.
func (s *CPUSet) UnmarshalText(b []byte) error {
	parsed, err := ParseCPUList(string(b))
	if err != nil {
		return err
	}
	*s = parsed
	return nil
}
