package amd

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"

	"github.com/parityhpc/parity/topology"
)

// ErrMalformed is wrapped by every error about a sysfs or KFD file whose
// content cannot be parsed; the message names the file and the value.
var ErrMalformed = errors.New("amd: malformed sysfs value")

func malformed(path, value string, cause error) error {
	if cause == nil {
		return fmt.Errorf("%w: %s: %q", ErrMalformed, path, value)
	}
	return fmt.Errorf("%w: %s: %q: %v", ErrMalformed, path, value, cause)
}

// readAttr reads a sysfs attribute and trims it. ok is false when the file
// does not exist (the attribute is optional on this ASIC or kernel).
func readAttr(path string) (value string, ok bool, err error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("amd: reading %s: %w", path, err)
	}
	return strings.TrimSpace(string(b)), true, nil
}

// readInt reads a decimal attribute such as numa_node ("-1" allowed).
func readInt(path string) (int64, bool, error) {
	raw, ok, err := readAttr(path)
	if !ok || err != nil {
		return 0, ok, err
	}
	v, err := strconv.ParseInt(raw, 10, 64)
	if err != nil {
		return 0, false, malformed(path, raw, errors.New("not a decimal integer"))
	}
	return v, true, nil
}

// readUint reads a non-negative decimal attribute such as mem_info_vram_total.
func readUint(path string) (uint64, bool, error) {
	raw, ok, err := readAttr(path)
	if !ok || err != nil {
		return 0, ok, err
	}
	v, err := strconv.ParseUint(raw, 10, 64)
	if err != nil {
		return 0, false, malformed(path, raw, errors.New("not a non-negative decimal integer"))
	}
	return v, true, nil
}

// readHex reads "0x1002"-style attributes (vendor, device, unique_id).
func readHex(path string) (uint64, bool, error) {
	raw, ok, err := readAttr(path)
	if !ok || err != nil {
		return 0, ok, err
	}
	s := strings.TrimPrefix(strings.TrimPrefix(raw, "0x"), "0X")
	v, err := strconv.ParseUint(s, 16, 64)
	if err != nil || s == "" {
		return 0, false, malformed(path, raw, errors.New("not hexadecimal"))
	}
	return v, true, nil
}

// readCPUList reads local_cpulist-style attributes.
func readCPUList(path string) (topology.CPUSet, bool, error) {
	raw, ok, err := readAttr(path)
	if !ok || err != nil {
		return topology.CPUSet{}, ok, err
	}
	s, err := topology.ParseCPUList(raw)
	if err != nil {
		return topology.CPUSet{}, false, malformed(path, raw, err)
	}
	return s, true, nil
}

// readCPUMask reads local_cpus-style hexadecimal masks.
func readCPUMask(path string) (topology.CPUSet, bool, error) {
	raw, ok, err := readAttr(path)
	if !ok || err != nil {
		return topology.CPUSet{}, ok, err
	}
	s, err := topology.ParseCPUMask(raw)
	if err != nil {
		return topology.CPUSet{}, false, malformed(path, raw, err)
	}
	return s, true, nil
}

// rasCount is one ras/<block>_err_count file.
type rasCount struct {
	UE, CE uint64
}

// parseRASCount parses "ue: N\nce: M" (newer kernels add "de: K" for
// deferred errors, which is accepted and ignored). Both ue and ce must be
// present exactly once.
func parseRASCount(content string) (rasCount, error) {
	var c rasCount
	var seenUE, seenCE bool
	for _, line := range strings.Split(content, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		key, val, found := strings.Cut(line, ":")
		if !found {
			return rasCount{}, fmt.Errorf("line %q is not \"key: count\"", line)
		}
		key = strings.TrimSpace(key)
		n, err := strconv.ParseUint(strings.TrimSpace(val), 10, 64)
		if err != nil {
			return rasCount{}, fmt.Errorf("line %q: count is not a non-negative integer", line)
		}
		switch key {
		case "ue":
			if seenUE {
				return rasCount{}, errors.New("ue given twice")
			}
			c.UE, seenUE = n, true
		case "ce":
			if seenCE {
				return rasCount{}, errors.New("ce given twice")
			}
			c.CE, seenCE = n, true
		}
	}
	if !seenUE || !seenCE {
		return rasCount{}, errors.New("want both ue and ce counts")
	}
	return c, nil
}

// readRASCount reads and parses one RAS counter file.
func readRASCount(path string) (rasCount, bool, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return rasCount{}, false, nil
	}
	if err != nil {
		return rasCount{}, false, fmt.Errorf("amd: reading %s: %w", path, err)
	}
	c, err := parseRASCount(string(b))
	if err != nil {
		return rasCount{}, false, malformed(path, string(b), err)
	}
	return c, true, nil
}

// properties is a parsed KFD properties file: "key value" lines.
type properties struct {
	path string
	m    map[string]string
}

// parseProperties parses KFD "key value" lines. Keys must be unique and
// each line must have exactly two fields; values stay raw until a typed
// accessor reads them, so an unused odd value cannot fail discovery.
func parseProperties(path, content string) (properties, error) {
	p := properties{path: path, m: map[string]string{}}
	for i, line := range strings.Split(content, "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if len(f) != 2 {
			return properties{}, malformed(path, line, fmt.Errorf("line %d is not \"key value\"", i+1))
		}
		if _, dup := p.m[f[0]]; dup {
			return properties{}, malformed(path, line, fmt.Errorf("key %q repeated", f[0]))
		}
		p.m[f[0]] = f[1]
	}
	return p, nil
}

func readProperties(path string) (properties, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return properties{}, fmt.Errorf("amd: reading %s: %w", path, err)
	}
	return parseProperties(path, string(b))
}

// uint returns a non-negative property; ok is false when it is absent.
func (p properties) uint(key string) (uint64, bool, error) {
	raw, ok := p.m[key]
	if !ok {
		return 0, false, nil
	}
	v, err := strconv.ParseUint(raw, 10, 64)
	if err != nil {
		return 0, false, malformed(p.path, key+" "+raw, errors.New("not a non-negative integer"))
	}
	return v, true, nil
}

// int returns a signed property (drm_render_minor can be -1 on CPU nodes).
func (p properties) int(key string) (int64, bool, error) {
	raw, ok := p.m[key]
	if !ok {
		return 0, false, nil
	}
	v, err := strconv.ParseInt(raw, 10, 64)
	if err != nil {
		return 0, false, malformed(p.path, key+" "+raw, errors.New("not an integer"))
	}
	return v, true, nil
}
