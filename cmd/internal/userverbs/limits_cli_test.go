package userverbs

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/parityhpc/parity/scheduler/client"
	"github.com/parityhpc/parity/scheduler/config"
	"github.com/parityhpc/parity/scheduler/controller"
)

// startCLIClusterWith is startCLICluster with extra top-level settings.
func startCLIClusterWith(t *testing.T, extra string) *cliCluster {
	t.Helper()
	cfg, err := config.Parse("cli.yaml", []byte(e2eCluster+extra))
	if err != nil {
		t.Fatal(err)
	}
	c, err := controller.New(controller.Options{Config: cfg, Listen: "127.0.0.1:0", StateDir: t.TempDir(), MetricsAddr: "off",
		NoScheduler: true, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &cliCluster{t: t, c: c, dir: t.TempDir()}
}

// TestCLIReportsTheControllersLimits: sbatch over gRPC and the lean sbatch
// (JSON over HTTP) impose no numbers of their own: the cluster's
// MaxArraySize (here 5001, above Slurm's default the command line once
// applied) and the nice rule are the controller's, in its words, the same
// through both.
func TestCLIReportsTheControllersLimits(t *testing.T) {
	cl := startCLIClusterWith(t, "maxArraySize: 5001\n")
	writeScript(t, cl.dir, "ok.sh", "#!/bin/sh\nhostname\n")
	cases := []struct {
		name, user string
		args       []string
		code       int
		want       string
	}{
		{"array within the cluster's MaxArraySize", "alice", []string{"--array=0-5000", "ok.sh"}, 0, "Submitted batch job"},
		{"array past it", "alice", []string{"--array=0-5001", "ok.sh"}, 1, "index 5001 is above the maximum 5000 (MaxArraySize-1)"},
		{"negative nice by a user", "alice", []string{"--nice=-5", "ok.sh"}, 1, "--nice=-5: access/permission denied: only operators may set a negative nice"},
		{"nice past the controller's bound", "alice", []string{"--nice=20000", "ok.sh"}, 1, "--nice=20000: must be within -10000..10000"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv(client.EnvToken, "")
			t.Setenv("XDG_CONFIG_HOME", cl.dir+"/none")
			argv := append([]string{"sbatch"}, c.args...)
			gout, gerr, gcode := runCLI(cl.as(c.user, nil), argv...)
			lout, lerr, lcode := runLean(t, cl.as(c.user, nil), argv...)
			for path, r := range map[string]struct {
				out  string
				code int
			}{"gRPC sbatch": {gout + gerr, gcode}, "lean sbatch": {lout + lerr, lcode}} {
				if r.code != c.code || !strings.Contains(r.out, c.want) {
					t.Errorf("%s: exit %d, want %d with %q:\n%s", path, r.code, c.code, c.want, r.out)
				}
			}
		})
	}
}
