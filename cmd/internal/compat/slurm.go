package compat

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
)

// Slurm runs the real Slurm's commands found on $PATH, against the
// cluster conf names (its SLURM_CONF).
type Slurm struct{ Conf string }

// Run runs argv with the process's environment, less any SBATCH_* or
// SLURM_* of the caller's, plus SLURM_CONF and env.
func (s Slurm) Run(ctx context.Context, dir string, env map[string]string, argv ...string) (string, string, int) {
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = dir
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "SBATCH_") && !strings.HasPrefix(kv, "SLURM_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "SLURM_CONF="+s.Conf)
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			return out.String(), err.Error(), 127
		}
		code = ee.ExitCode()
	}
	return out.String(), errb.String(), code
}
