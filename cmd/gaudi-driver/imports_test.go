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

// TestImportsOnlyThePublicContract keeps the adapter out-of-tree in all but
// location: it needs the contract's vocabulary, the plugin and its own
// simulator, nothing else of Parity (no scheduler, no labs, no in-tree
// vendor); the simulator needs nothing of Parity at all.
func TestImportsOnlyThePublicContract(t *testing.T) {
	tests := []struct {
		dir     string
		allowed []string
	}{
		{".", []string{"gres", "topology", "vendors", "vendors/plugin", "cmd/gaudi-driver/gaudisim"}},
		{"gaudisim", nil},
	}
	const module = "github.com/parityhpc/parity/"
	for _, tt := range tests {
		files, err := filepath.Glob(filepath.Join(tt.dir, "*.go"))
		if err != nil || len(files) == 0 {
			t.Fatalf("%s: no Go files (%v)", tt.dir, err)
		}
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
				if ours && !slices.Contains(tt.allowed, rel) {
					t.Errorf("%s imports %s; it may use only %v of this module", f, path, tt.allowed)
				}
			}
		}
	}
}
