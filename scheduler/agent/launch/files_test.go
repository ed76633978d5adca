package launch

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/parityhpc/parity/vendors"
)

func TestCheckFilesRefusesWhatAJobCannotBeGiven(t *testing.T) {
	ok := vendors.File{Name: "topo.xml", Env: "TOPO_FILE", Content: []byte("x")}
	tests := []struct {
		files []vendors.File
		err   string
	}{
		{[]vendors.File{ok}, ""},
		{[]vendors.File{{Name: "../escape", Env: "A"}}, "not a plain file name"},
		{[]vendors.File{{Name: "a/b", Env: "A"}}, "not a plain file name"},
		{[]vendors.File{{Name: ".hidden", Env: "A"}}, "not a plain file name"},
		{[]vendors.File{{Name: "", Env: "A"}}, "not a plain file name"},
		{[]vendors.File{{Name: "f", Env: "1BAD"}}, "not a variable name"},
		{[]vendors.File{{Name: "f", Env: "A=B"}}, "not a variable name"},
		{[]vendors.File{ok, ok}, "given twice"},
		{[]vendors.File{ok, {Name: "other", Env: "TOPO_FILE"}}, "already names another file"},
	}
	for _, tc := range tests {
		err := checkFiles(tc.files)
		if tc.err == "" && err != nil || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("checkFiles(%+v) = %v, want %q", tc.files, err, tc.err)
		}
	}
}

func TestWriteFilesGivesTheJobReadableFilesNamedInItsEnvironment(t *testing.T) {
	dir := t.TempDir()
	spec := Spec{JobID: 7}
	spec.AddPrepared(vendors.Prepared{Env: map[string]string{"V": "1"}, Files: []vendors.File{{Name: "topo.xml", Env: "TOPO_FILE", Content: []byte("<system/>")}}})
	old := unixUmask(0o077) // the agent's umask must not narrow the job's read
	defer unixUmask(old)
	if err := writeFiles(dir, &spec); err != nil {
		t.Fatal(err)
	}
	path := spec.Prepared.Env["TOPO_FILE"]
	if path != filepath.Join(dir, filesDir, "topo.xml") {
		t.Fatalf("TOPO_FILE=%q", path)
	}
	b, err := os.ReadFile(path)
	st, serr := os.Stat(path)
	if err != nil || serr != nil || string(b) != "<system/>" || st.Mode().Perm() != 0o644 {
		t.Errorf("the file: %q (%v), mode %v (%v)", b, err, st.Mode().Perm(), serr)
	}
	bad := Spec{JobID: 8, Prepared: vendors.Prepared{Files: []vendors.File{{Name: "../x", Env: "X"}}}}
	if err := writeFiles(dir, &bad); err == nil || !strings.Contains(err.Error(), "job 8") {
		t.Errorf("a bad file name: %v", err)
	}
}

func unixUmask(m int) int { return unix.Umask(m) }
