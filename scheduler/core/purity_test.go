package core

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPurity keeps the core a pure function of its inputs: no imports of
// the layers above it or of I/O and process packages, no goroutines, no
// wall clock and no unseeded randomness in non-test files.
func TestPurity(t *testing.T) {
	forbidden := []string{"/vendors", "/labs", "/scheduler/controller", "/scheduler/agent", "/scheduler/store",
		"/scheduler/client", "/healthcheck", "os", "os/exec", "net", "net/http", "io/ioutil", "syscall", "unsafe"}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(fset, name, src, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			path := strings.Trim(imp.Path.Value, `"`)
			for _, bad := range forbidden {
				if path == bad || strings.HasPrefix(bad, "/") && strings.Contains(path, "/parity"+bad) {
					t.Errorf("%s imports %s", name, path)
				}
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch x := n.(type) {
			case *ast.GoStmt:
				t.Errorf("%s: starts a goroutine at %s", name, fset.Position(x.Pos()))
			case *ast.SelectorExpr:
				if id, ok := x.X.(*ast.Ident); ok {
					call := id.Name + "." + x.Sel.Name
					switch call {
					case "time.Now", "time.Since", "time.Until", "time.Sleep", "time.After", "time.Tick", "time.NewTimer", "rand.Int", "rand.IntN", "rand.Float64", "rand.Shuffle":
						t.Errorf("%s: uses %s at %s", name, call, fset.Position(x.Pos()))
					}
				}
			}
			return true
		})
	}
}
