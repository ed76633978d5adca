package parity_test

import (
	"go/scanner"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"unicode"
)

// vendorWords are the names that mark vendor knowledge: vendors, their
// APIs, runtimes, fabrics and fault codes. A word matches whole, after an
// identifier or string is split at case changes, digits and punctuation
// (so "CUDA_VISIBLE_DEVICES" and "nvidiaSMI" match, "ship" does not).
func vendorWords() []string {
	return []string{
		"nvidia", "nvml", "nvlink", "nvswitch", "dcgm", "cuda", "xid", "mig", "nccl",
		"amd", "amdgpu", "rocm", "rocr", "hip", "hsa", "kfd", "xgmi", "rccl",
		"intel", "habana", "habanalabs", "gaudi", "hccl",
	}
}

// notVendorChunks are whole chunks that contain a vendor word without being
// one: the architecture name Go calls amd64.
func notVendorChunks() []string { return []string{"amd64"} }

// knownVendorNames is the debt: files outside vendors/ and labs/ that name a
// vendor today, with the words they use. Each is known and owed to the
// driver-registry step (issue 25): per-driver settings move into each
// driver's configuration block, the in-tree list into vendors/builtin, and
// the agent's flags name no vendor. A file or word not listed fails the
// test; an entry no longer needed fails it too, so the list only shrinks.
func knownVendorNames() map[string][]string {
	return map[string][]string{
		// Convention, not debt: dcgm-exporter's metric names for what every
		// vendor measures (utilisation, memory, temperature, power, ECC),
		// served and checked on every vendor's devices so existing
		// dashboards work on all of them.
		"scheduler/agent/telemetry/collector.go": {"dcgm"},
		"conformance/telemetry.go":               {"dcgm"},
	}
}

// adapterDirs are out-of-tree vendor adapters kept in this repository (issue
// 25): a vendor's own command, vendor code as vendors/ is, held instead to
// importing only the public packages by its own imports test.
func adapterDirs() []string { return []string{"cmd/gaudi-driver"} }

func checkVendorNames(t *testing.T, pkgs []pkg) {
	known := knownVendorNames()
	found := map[string][]string{}
	for _, p := range pkgs {
		rel := p.rel()
		if rel == "vendors" || strings.HasPrefix(rel, "vendors/") || rel == "labs" || strings.HasPrefix(rel, "labs/") {
			continue
		}
		if slices.ContainsFunc(adapterDirs(), func(d string) bool { return rel == d || strings.HasPrefix(rel, d+"/") }) {
			continue
		}
		for i, name := range slices.Concat(p.GoFiles, p.CgoFiles) {
			src, err := os.ReadFile(filepath.Join(p.Dir, name))
			if err != nil {
				t.Fatal(err)
			}
			if words := vendorNamesIn(src); len(words) > 0 {
				found[p.files()[i]] = words
			}
		}
	}
	for _, file := range sortedKeys(found) {
		for _, w := range found[file] {
			if !slices.Contains(known[file], w) {
				t.Errorf("%s names the vendor word %q outside a comment: vendor knowledge lives in vendors/ "+
					"(docs/ARCHITECTURE.md); make it data a driver returns", file, w)
			}
		}
	}
	for _, file := range sortedKeys(known) {
		for _, w := range known[file] {
			if !slices.Contains(found[file], w) {
				t.Errorf("%s no longer names %q: remove it from knownVendorNames", file, w)
			}
		}
	}
}

// vendorNamesIn returns the vendor words that occur in the identifiers and
// literals of one Go file, comments left out, sorted and unique.
func vendorNamesIn(src []byte) []string {
	fset := token.NewFileSet()
	file := fset.AddFile("", fset.Base(), len(src))
	var s scanner.Scanner
	s.Init(file, src, nil, 0) // no ScanComments: comments may name vendors
	seen := map[string]bool{}
	for {
		_, tok, lit := s.Scan()
		if tok == token.EOF {
			break
		}
		if tok != token.IDENT && tok != token.STRING && tok != token.CHAR {
			continue
		}
		for _, w := range words(lit) {
			if slices.Contains(vendorWords(), w) {
				seen[w] = true
			}
		}
	}
	return sortedKeys(seen)
}

// words splits a token at anything not a letter or digit, and each chunk
// again at case changes and between letters and digits, lower-cased:
// "NVMLDevice2" is nvmldevice2, nvml, device, 2.
func words(lit string) []string {
	var out []string
	chunks := strings.FieldsFunc(lit, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	for _, chunk := range chunks {
		if slices.Contains(notVendorChunks(), strings.ToLower(chunk)) {
			continue
		}
		out = append(out, strings.ToLower(chunk)) // whole, for mixed case like "ROCm"
		rs := []rune(chunk)
		start := 0
		for i := 1; i <= len(rs); i++ {
			if i == len(rs) || boundary(rs, i) {
				out = append(out, strings.ToLower(string(rs[start:i])))
				start = i
			}
		}
	}
	return out
}

// boundary reports whether a word starts at rs[i]: lower to upper
// ("nvidiaSMI"), the last capital of a run before lower case ("NVMLDevice"),
// or a change between letters and digits.
func boundary(rs []rune, i int) bool {
	a, b := rs[i-1], rs[i]
	switch {
	case unicode.IsDigit(a) != unicode.IsDigit(b):
		return true
	case unicode.IsLower(a) && unicode.IsUpper(b):
		return true
	case unicode.IsUpper(a) && unicode.IsUpper(b) && i+1 < len(rs) && unicode.IsLower(rs[i+1]):
		return true
	}
	return false
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
