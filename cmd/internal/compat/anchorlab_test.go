package compat

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/parityhpc/parity/labs/cluster"
	"github.com/parityhpc/parity/labs/labfile"
	"github.com/parityhpc/parity/scheduler/auth"
)

// anchorLab is the anchor's cluster as a lab (../shared/tools/slurm-anchor
// slurm.conf): n[1-4] in partition gpu, each with 16 CPUs (2:8:1), 64000
// MB and 8 H100, and priority/multifactor with no PriorityWeight*, so
// every weight is 0.
const anchorLab = `name: anchor
seed: 1
priority: {age: 0, fairshare: 0, jobSize: 0, partition: 0, qos: 0}
nodes:
  - names: n[1-4]
    template: dgx-h100
    sockets: 2
    coresPerSocket: 8
    threadsPerCore: 1
    memoryMB: 64000
partitions:
  - name: gpu
    nodes: n[1-4]
    default: true
`

// startAnchorLab brings up anchorLab for the test, with no accounts (the
// anchor runs accounting_storage/none), and returns the side that runs
// the verbs against it as root and the test's directory. With srun, a
// copy of the test binary named srun is first on the side's PATH, so jobs
// run Parity's srun.
func startAnchorLab(t *testing.T, srun bool) (labSide, string) {
	t.Helper()
	lab, err := labfile.Parse("anchor", []byte(anchorLab))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	dir := t.TempDir()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	c, err := cluster.Up(ctx, cluster.Options{Lab: lab, Dir: filepath.Join(dir, "lab"), Shim: []string{exe, labShimArg}, NoAccounts: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Down(context.Background()) })
	tok, err := c.Token("root", auth.RoleAdmin)
	if err != nil {
		t.Fatal(err)
	}
	side := labSide{addr: c.Addr, token: tok, path: "/usr/bin:/bin"}
	if !srun {
		return side, dir
	}
	bin := filepath.Join(dir, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bin, "srun"), data, 0o755); err != nil {
		t.Fatal(err)
	}
	side.path = bin + ":" + side.path
	return side, dir
}
