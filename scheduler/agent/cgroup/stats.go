package cgroup

import (
	"bufio"
	"bytes"
	"path/filepath"
	"strconv"
	"time"

	"github.com/parityhpc/parity/scheduler/agent/ctlfile"
)

// Stats are the counters accounting and end-state classification need.
type Stats struct {
	// CPUTime is user+system time of every member, past and present.
	CPUTime time.Duration `json:"cpuTime"`
	// MemoryBytes is the current charge; MemoryPeakBytes its high-water mark.
	MemoryBytes     uint64 `json:"memoryBytes"`
	MemoryPeakBytes uint64 `json:"memoryPeakBytes"`
	// MemoryLimitBytes is the limit in force (a huge number when unset).
	MemoryLimitBytes uint64 `json:"memoryLimitBytes"`
	// OOMKills counts processes the OOM killer ended in this group.
	OOMKills uint64 `json:"oomKills"`
	// Missing names counters the kernel did not provide (an old kernel
	// without memory.peak, a host without cpuacct), so "not measured" is
	// never mistaken for zero.
	Missing []string `json:"missing,omitempty"`
}

// read returns a counter: the whole file as one number when key is "",
// else the value of the "key value" line. Unreadable counters are recorded
// in Missing.
func (st *Stats) read(path, key string) (uint64, bool) {
	v, ok := readCounter(path, key)
	if !ok {
		name := filepath.Base(path)
		if key != "" {
			name += ":" + key
		}
		st.Missing = append(st.Missing, name)
	}
	return v, ok
}

func readCounter(path, key string) (uint64, bool) {
	b, err := ctlfile.ReadValue(path)
	if err != nil {
		return 0, false
	}
	if key == "" {
		s := string(bytes.TrimSpace(b))
		if s == "max" {
			return ^uint64(0), true
		}
		v, err := strconv.ParseUint(s, 10, 64)
		return v, err == nil
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		k, val, ok := bytes.Cut(sc.Bytes(), []byte(" "))
		if ok && string(k) == key {
			v, err := strconv.ParseUint(string(bytes.TrimSpace(val)), 10, 64)
			return v, err == nil
		}
	}
	return 0, false
}
