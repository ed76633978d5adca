package main

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestImportsOnlyThePublicContract keeps the example honest: a vendor's
// adapter needs the contract's vocabulary and the plugin, nothing else of
// Parity (no internal packages, no scheduler, no labs).
func TestImportsOnlyThePublicContract(t *testing.T) {
	allowed := []string{"gres", "topology", "vendors", "vendors/plugin"}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	const module = "github.com/parityhpc/parity/"
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		parsed, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range parsed.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			rel, ours := strings.CutPrefix(path, module)
			if ours && !slices.Contains(allowed, rel) {
				t.Errorf("%s imports %s; an out-of-tree adapter may use only %v", f, path, allowed)
			}
		}
	}
}
