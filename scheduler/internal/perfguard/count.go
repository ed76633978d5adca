package perfguard

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// steadyRuntime are the runtime's functions whose instructions follow the
// program's work (allocating, copying, hashing, maps, strings) and so
// count; the rest of the runtime (scheduler, system monitor, signals,
// tracebacks, timers) runs more the longer the wall clock, and does not.
var steadyRuntime = []string{
	"runtime.mallocgc", "runtime.newobject", "runtime.makeslice", "runtime.growslice", "runtime.makemap",
	"runtime.nextFreeFast", "runtime.heapSetType", "runtime.memmove", "runtime.memclr", "runtime.typedmemmove",
	"runtime.bulkBarrierPreWrite", "runtime.wbBuf", "runtime.mapassign", "runtime.mapaccess", "internal/runtime/maps.",
	"runtime.memequal", "runtime.memhash", "runtime.strhash", "runtime.aeshash", "aeshashbody", "memeqbody",
	"runtime.cmpstring", "indexbytebody", "runtime.concatstring", "runtime.slicebytetostring", "runtime.rawstring",
	"runtime.stringtoslicebyte", "runtime.intstring", "runtime.convT", "runtime.assertE2I", "runtime.typeAssert",
}

// counted reports whether a function's instructions count.
func counted(fn string) bool {
	runtime := strings.HasPrefix(fn, "runtime.") || strings.HasPrefix(fn, "internal/runtime/") ||
		strings.HasPrefix(fn, "os/signal.") || strings.HasPrefix(fn, "0x")
	if !runtime {
		return true
	}
	for _, p := range steadyRuntime {
		if strings.HasPrefix(fn, p) {
			return true
		}
	}
	return false
}

// countSteady sums the instructions (Ir) of the counted functions in a
// cachegrind output file: "fn=NAME" lines start a function, "LINE IR"
// lines carry its counts.
func countSteady(r io.Reader) (int64, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	var total int64
	keep, events := false, false
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "events:"):
			if f := strings.Fields(strings.TrimPrefix(line, "events:")); len(f) == 0 || f[0] != "Ir" {
				return 0, fmt.Errorf("cachegrind events %q: want Ir first", line)
			}
			events = true
		case strings.HasPrefix(line, "fn="):
			keep = counted(strings.TrimPrefix(line, "fn="))
		case keep && line != "" && line[0] >= '0' && line[0] <= '9':
			f := strings.Fields(line)
			if len(f) < 2 {
				continue
			}
			n, err := strconv.ParseInt(f[1], 10, 64)
			if err != nil {
				return 0, fmt.Errorf("cachegrind line %q: %w", line, err)
			}
			total += n
		}
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	if !events {
		return 0, fmt.Errorf("not a cachegrind output (no events line)")
	}
	return total, nil
}
