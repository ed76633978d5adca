package state

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// TestPurity keeps the machine pure and low in the layering: it imports
// only the standard library's pure packages and the scheduler's pure
// vocabulary (core, policy, gres, topology); no goroutines, no wall clock,
// no randomness in non-test files.
func TestPurity(t *testing.T) {
	allowed := map[string]bool{"errors": true, "fmt": true, "slices": true, "strings": true, "time": true, "maps": true, "sort": true, "strconv": true, "math": true, "math/bits": true,
		"github.com/parityhpc/parity/scheduler/core": true, "github.com/parityhpc/parity/scheduler/policy": true,
		"github.com/parityhpc/parity/gres": true, "github.com/parityhpc/parity/topology": true}
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
			if path := strings.Trim(imp.Path.Value, `"`); !allowed[path] {
				t.Errorf("%s imports %s: the state machine stays pure (see doc.go)", name, path)
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch x := n.(type) {
			case *ast.GoStmt:
				t.Errorf("%s: starts a goroutine at %s", name, fset.Position(x.Pos()))
			case *ast.SelectorExpr:
				if id, ok := x.X.(*ast.Ident); ok && id.Name == "time" {
					switch x.Sel.Name {
					case "Now", "Since", "Until", "Sleep", "After", "Tick", "NewTimer", "NewTicker", "AfterFunc":
						t.Errorf("%s: uses time.%s at %s: time is the command's", name, x.Sel.Name, fset.Position(x.Pos()))
					}
				}
			}
			return true
		})
	}
}
