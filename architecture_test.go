package parity_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestArchitecture checks the rules of docs/ARCHITECTURE.md over one
// `go list` of the module: the import direction, what the low packages may
// import, the purity of the scheduler's core (architecture_pure_test.go) and
// no vendor name outside vendors/ and labs/ (architecture_names_test.go).
func TestArchitecture(t *testing.T) {
	pkgs := listModule(t)
	t.Run("imports point down the layering", func(t *testing.T) { checkLayering(t, pkgs) })
	t.Run("low packages import only what they may", func(t *testing.T) { checkLowImports(t, pkgs) })
	t.Run("the core is pure", func(t *testing.T) { checkPurity(t, pkgs) })
	t.Run("no vendor names outside vendors and labs", func(t *testing.T) { checkVendorNames(t, pkgs) })
}

const module = "github.com/parityhpc/parity"

// reporter is the part of *testing.T the import checks use, so their own
// test can record what they say.
type reporter interface {
	Errorf(format string, args ...any)
}

// pkg is what the rules read of one package of the module.
type pkg struct {
	ImportPath string
	Dir        string
	GoFiles    []string
	CgoFiles   []string
	Imports    []string
}

// rel is the package's path inside the module ("" for the root).
func (p pkg) rel() string { return strings.TrimPrefix(strings.TrimPrefix(p.ImportPath, module), "/") }

// files are the package's non-test Go files, as paths from the module root.
func (p pkg) files() []string {
	var out []string
	for _, f := range slices.Concat(p.GoFiles, p.CgoFiles) {
		out = append(out, filepath.ToSlash(filepath.Join(p.rel(), f)))
	}
	return out
}

// moduleImports are the package's imports inside the module, as paths
// inside it.
func (p pkg) moduleImports() []string {
	var out []string
	for _, imp := range p.Imports {
		if imp == module || strings.HasPrefix(imp, module+"/") {
			out = append(out, strings.TrimPrefix(strings.TrimPrefix(imp, module), "/"))
		}
	}
	return out
}

// listModule runs `go list` once over the module, asking only for the
// fields the rules read (so it neither builds nor checks staleness).
func listModule(t *testing.T) []pkg {
	t.Helper()
	cmd := exec.Command("go", "list", "-json=ImportPath,Dir,GoFiles,CgoFiles,Imports", "./...")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.Bytes())
	}
	var pkgs []pkg
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p pkg
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("go list output: %v", err)
		}
		pkgs = append(pkgs, p)
	}
	if len(pkgs) < 10 {
		t.Fatalf("go list found %d packages: is the test running at the module root?", len(pkgs))
	}
	return pkgs
}

// layer is one row of the dependency direction in docs/ARCHITECTURE.md,
// highest first; a package imports only packages of its own row or lower.
type layer struct {
	name  string
	roots []string // a package belongs to the row of its longest root
}

// layers returns the rows, top first. Service libraries of the scheduler
// (api, config, jobspec, …) sit just under the daemons that use them.
func layers() []layer {
	return []layer{
		{"cmd", []string{"cmd"}},
		{"conformance", []string{"conformance"}},
		{"labs", []string{"labs"}},
		{"daemons", []string{"scheduler", "scheduler/controller", "scheduler/agent", "scheduler/client", "scheduler/store"}},
		{"scheduler services", []string{"scheduler/api", "scheduler/config", "scheduler/jobspec", "scheduler/accounting",
			"scheduler/workflow", "scheduler/auth", "scheduler/httplimit", "scheduler/internal"}},
		{"state", []string{"scheduler/state"}},
		{"core", []string{"scheduler/core", "scheduler/policy"}},
		{"vendors", []string{"vendors"}},
		{"healthcheck", []string{"healthcheck"}},
		{"reports", []string{"reports"}},
		{"gres", []string{"gres"}},
		{"topology", []string{"topology"}},
	}
}

// rank returns the row of a package path (0 is the top) and false when no
// row holds it.
func rank(path string) (int, string, bool) {
	best, bestLen, name := -1, -1, ""
	for i, l := range layers() {
		for _, root := range l.roots {
			if (path == root || strings.HasPrefix(path, root+"/")) && len(root) > bestLen {
				best, bestLen, name = i, len(root), l.name
			}
		}
	}
	return best, name, best >= 0
}

func checkLayering(t reporter, pkgs []pkg) {
	for _, p := range pkgs {
		from, fromName, ok := rank(p.rel())
		if !ok {
			if p.rel() != "" { // the module root holds only this test
				t.Errorf("package %s is in no row of the layering: place it in docs/ARCHITECTURE.md and in layers()", p.rel())
			}
			continue
		}
		for _, imp := range p.moduleImports() {
			to, toName, ok := rank(imp)
			if ok && to < from {
				t.Errorf("%s (%s) imports %s (%s): imports point down docs/ARCHITECTURE.md's layering, never up",
					p.rel(), fromName, imp, toName)
			}
		}
	}
}

// allowedModuleImports are the only module packages some low packages may
// import, beyond their own sub-packages.
func allowedModuleImports() map[string][]string {
	return map[string][]string{
		"topology":         {},
		"gres":             {"topology"},
		"reports":          {"gres"},
		"healthcheck":      {"gres"},
		"scheduler/policy": {"gres", "topology"},
		"scheduler/core":   {"gres", "topology", "scheduler/policy"},
		"scheduler/state":  {"gres", "topology", "scheduler/core", "scheduler/policy"},
	}
}

// deniedForConformance are the internals conformance must not import: it
// talks to a cluster through scheduler/client, or it would certify the
// harness rather than the system.
func deniedForConformance() []string { return []string{"scheduler/controller", "scheduler/state"} }

func checkLowImports(t reporter, pkgs []pkg) {
	allowed := allowedModuleImports()
	for _, p := range pkgs {
		rel := p.rel()
		for _, imp := range p.moduleImports() {
			if strings.HasPrefix(imp, rel+"/") {
				continue
			}
			if rel == "conformance" || strings.HasPrefix(rel, "conformance/") {
				for _, d := range deniedForConformance() {
					if imp == d || strings.HasPrefix(imp, d+"/") {
						t.Errorf("%s imports %s: conformance talks to a cluster only through scheduler/client", rel, imp)
					}
				}
				continue
			}
			if list, ok := allowed[rel]; ok && !slices.Contains(list, imp) {
				t.Errorf("%s imports %s: it may import only %v of the module", rel, imp, list)
			}
		}
	}
}
