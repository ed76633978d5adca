package parity_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// purePackages are pure in docs/ARCHITECTURE.md's sense: no goroutines, no
// clock (time is an argument), no I/O, no randomness without a seed.
func purePackages() []string {
	return []string{"scheduler/core", "scheduler/policy", "scheduler/state"}
}

// impureStd are the standard packages that reach outside the process or
// its inputs: files, the network, the system, logs, unseeded randomness.
func impureStd(path string) bool {
	for _, p := range []string{"os", "net", "syscall", "log", "runtime", "plugin", "database"} {
		if path == p || strings.HasPrefix(path, p+"/") {
			return true
		}
	}
	return slices.Contains([]string{"io/ioutil", "io/fs", "crypto/rand", "math/rand"}, path)
}

// clockCalls are the time functions that read or wait on the wall clock.
func clockCalls() []string {
	return []string{"Now", "Since", "Until", "Sleep", "After", "Tick", "NewTimer", "NewTicker", "AfterFunc"}
}

// seededRand are the math/rand/v2 names a pure package may use: a
// generator built from the caller's seed, never the global source.
func seededRand() []string {
	return []string{"New", "NewPCG", "NewChaCha8", "Rand", "PCG", "ChaCha8", "Source", "NewZipf", "Zipf"}
}

func checkPurity(t *testing.T, pkgs []pkg) {
	for _, p := range pkgs {
		if !slices.Contains(purePackages(), p.rel()) {
			continue
		}
		fset := token.NewFileSet()
		for _, name := range slices.Concat(p.GoFiles, p.CgoFiles) {
			path := filepath.Join(p.Dir, name)
			f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
			if err != nil {
				t.Fatalf("parse %s: %v", path, err)
			}
			for _, v := range pureViolations(fset, f) {
				t.Errorf("%s/%s: %s: %s stays pure (docs/ARCHITECTURE.md)", p.rel(), name, v, p.rel())
			}
		}
	}
}

// pureViolations lists what makes one file impure.
func pureViolations(fset *token.FileSet, f *ast.File) []string {
	var out []string
	names := map[string]string{} // local name -> import path, for time and rand
	for _, imp := range f.Imports {
		path := strings.Trim(imp.Path.Value, `"`)
		if impureStd(path) {
			out = append(out, "imports "+path)
		}
		local := filepath.Base(path)
		if path == "math/rand/v2" {
			local = "rand"
		}
		if imp.Name != nil {
			local = imp.Name.Name
		}
		names[local] = path
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.GoStmt:
			out = append(out, "starts a goroutine at "+fset.Position(x.Pos()).String())
		case *ast.SelectorExpr:
			id, ok := x.X.(*ast.Ident)
			if !ok {
				break
			}
			switch names[id.Name] {
			case "time":
				if slices.Contains(clockCalls(), x.Sel.Name) {
					out = append(out, "reads the clock (time."+x.Sel.Name+") at "+fset.Position(x.Pos()).String())
				}
			case "math/rand/v2":
				if !slices.Contains(seededRand(), x.Sel.Name) {
					out = append(out, "uses the unseeded global source (rand."+x.Sel.Name+") at "+fset.Position(x.Pos()).String())
				}
			}
		}
		return true
	})
	return out
}
