package parity_test

import (
	"fmt"
	"go/parser"
	"go/token"
	"reflect"
	"strings"
	"testing"
)

// The rules' own tests: each must catch what it is there to catch.

func TestVendorNamesIn(t *testing.T) {
	tests := []struct {
		name, src string
		want      []string
	}{
		{"comments may name vendors", "package p\n// NVIDIA's XID 79, AMD's RAS\n/* CUDA */ var x = 1\n", nil},
		{"an identifier, split at case changes", "package p\nvar XIDClass, nvidiaSMI, NVMLDevice2 int\n", []string{"nvidia", "nvml", "xid"}},
		{"a string, split at punctuation", "package p\nconst env = \"CUDA_VISIBLE_DEVICES\"\nconst k = \"nvlink\"\n", []string{"cuda", "nvlink"}},
		{"a raw string", "package p\nconst help = `runs on ROCm`\n", []string{"rocm"}},
		{"an import path", "package p\nimport \"example.com/vendors/amd\"\n", []string{"amd"}},
		{"words that only contain a vendor's", "package p\nvar ship, chip, commands, amd64, migrate, xidle = 1, 2, 3, \"amd64\", 5, 6\n", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := vendorNamesIn([]byte(tt.src))
			if len(got) == 0 {
				got = nil
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("vendorNamesIn = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestPureViolations(t *testing.T) {
	tests := []struct {
		name, src string
		want      []string // substrings, one per violation
	}{
		{"pure", "package p\nimport (\"time\"; \"math/rand/v2\")\nfunc f(now time.Time, seed uint64) time.Time { r := rand.New(rand.NewPCG(seed, 1)); _ = r; return now.Add(time.Second) }\n", nil},
		{"a goroutine", "package p\nfunc f() { go f() }\n", []string{"starts a goroutine"}},
		{"the clock", "package p\nimport clock \"time\"\nvar t = clock.Now()\n", []string{"time.Now"}},
		{"the global source", "package p\nimport \"math/rand/v2\"\nvar n = rand.IntN(3)\n", []string{"rand.IntN"}},
		{"I/O", "package p\nimport (\"os\"; \"net/http\"; \"log/slog\"; \"math/rand\")\nvar _ = os.Args\n",
			[]string{"imports os", "imports net/http", "imports log/slog", "imports math/rand"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, "p.go", tt.src, 0)
			if err != nil {
				t.Fatal(err)
			}
			got := pureViolations(fset, f)
			if len(got) != len(tt.want) {
				t.Fatalf("violations %q, want %d: %q", got, len(tt.want), tt.want)
			}
			for i, w := range tt.want {
				if !strings.Contains(got[i], w) {
					t.Errorf("violation %d = %q, want one naming %q", i, got[i], w)
				}
			}
		})
	}
}

func TestLayering(t *testing.T) {
	pkgs := []pkg{
		{ImportPath: module + "/gres", Imports: []string{module + "/topology", "fmt"}},
		{ImportPath: module + "/topology", Imports: []string{module + "/gres"}},                  // up
		{ImportPath: module + "/scheduler/core", Imports: []string{module + "/scheduler/store"}}, // up, and not allowed
		{ImportPath: module + "/conformance", Imports: []string{module + "/scheduler/controller"}},
		{ImportPath: module + "/newtop"}, // in no row
	}
	rec := &recorder{}
	checkLayering(rec, pkgs)
	checkLowImports(rec, pkgs)
	for _, want := range []string{"topology (topology) imports gres (gres)", "scheduler/core (core) imports scheduler/store (daemons)",
		"scheduler/core imports scheduler/store: it may import only", "conformance imports scheduler/controller",
		"package newtop is in no row"} {
		if !strings.Contains(rec.String(), want) {
			t.Errorf("the checks did not say %q; they said:\n%s", want, rec)
		}
	}
	if strings.Contains(rec.String(), "gres (gres) imports") {
		t.Errorf("gres importing topology was refused:\n%s", rec)
	}
}

// recorder keeps what a check reports.
type recorder struct{ strings.Builder }

func (r *recorder) Errorf(format string, args ...any) {
	fmt.Fprintf(&r.Builder, format+"\n", args...)
}
