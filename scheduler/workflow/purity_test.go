package workflow

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestPurity keeps workflow pure: only the standard library (no I/O or
// process packages), scheduler/core and scheduler/jobspec; no goroutines
// and no wall clock in non-test files.
func TestPurity(t *testing.T) {
	allowed := map[string]bool{"github.com/parityhpc/parity/scheduler/core": true, "github.com/parityhpc/parity/scheduler/jobspec": true}
	banned := map[string]bool{"os": true, "os/exec": true, "net": true, "net/http": true, "syscall": true, "unsafe": true, "io/ioutil": true}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if banned[path] || strings.Contains(path, ".") && !allowed[path] {
				t.Errorf("%s imports %s", name, path)
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch x := n.(type) {
			case *ast.GoStmt:
				t.Errorf("%s: starts a goroutine at %s", name, fset.Position(x.Pos()))
			case *ast.SelectorExpr:
				if id, ok := x.X.(*ast.Ident); ok && id.Name == "time" && (x.Sel.Name == "Now" || x.Sel.Name == "Since" || x.Sel.Name == "Sleep") {
					t.Errorf("%s: reads the clock at %s", name, fset.Position(x.Pos()))
				}
			}
			return true
		})
	}
}
