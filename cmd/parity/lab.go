package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/parityhpc/parity/labs/cluster"
	"github.com/parityhpc/parity/labs/labfile"
	"github.com/parityhpc/parity/scheduler/auth"
	"github.com/parityhpc/parity/scheduler/client"
)

// Files a running `lab up` keeps in its directory.
const (
	labPidFile  = "lab.pid"
	labNameFile = "lab.name"
	labLogFile  = "lab.log"
)

func defaultLabDir() string { return filepath.Join(os.TempDir(), "parity-lab") }

func newLabCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "lab",
		Short: "Start or stop a simulated lab cluster",
		Long: `A lab is an ordinary Parity cluster over simulated hardware: a controller
and one agent per node, each agent running the real vendor drivers over a
simulated machine (each vendor's management library mocked, or its sysfs and
device tree generated, with device nodes of the real major numbers). Every
verb works against it.

A lab runs in one process by default; with --processes the controller and
each agent are separate processes (` + "`parity controller`" + `, ` + "`parity agent`" + `), children
of the lab process with pid files and logs under the lab directory.

With --controllers 3 (or 5) the lab runs that many controllers, as a
production cluster.yaml with a controllers: list does: ports the OS
picked, one state directory each (DIR/controller, DIR/controller-2, …)
holding the same cluster key, one elected leader. The agents and the
printed PARITY_CONTROLLER get the comma-separated list, so every verb
follows the leader; ` + "`parity controller status`" + ` shows each one's role.`,
	}
	cmd.AddCommand(newLabUpCmd(), newLabDownCmd(), newLabBenchCmd())
	return cmd
}

func newLabUpCmd() *cobra.Command {
	var (
		dir         string
		processes   bool
		controllers int
	)
	cmd := &cobra.Command{
		Use:   "up [LAB]",
		Short: "Start a lab in the foreground until interrupted",
		Long: `Starts the built-in lab LAB (default "default") or the lab file LAB,
prints the controller's address, where the tokens are and an export line
for the other verbs, then runs until SIGINT or SIGTERM (or ` + "`parity lab down`" + `),
when it stops every job, agent and the controller and removes the lab's
cgroups. Built-in labs: ` + strings.Join(labfile.BuiltinNames(), ", ") + `.`,
		Example: `  sudo parity lab up
  sudo parity lab up my-lab.yaml --dir /srv/lab &
  eval "$(sudo cat /tmp/parity-lab/env)"; parity nodes`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := "default"
			if len(args) == 1 {
				name = args[0]
			}
			return runLabUp(cmd.Context(), cmd.OutOrStdout(), name, dir, labRun{processes: processes, controllers: controllers})
		},
	}
	cmd.Flags().StringVar(&dir, "dir", defaultLabDir(), "directory for the lab's state, node roots, tokens and logs")
	cmd.Flags().BoolVar(&processes, "processes", false, "run the controller and each agent as separate processes (logs in DIR/logs)")
	cmd.Flags().IntVar(&controllers, "controllers", 1, "controllers replicating the lab's state: 1, 3 or 5 (they elect a leader; PARITY_CONTROLLER lists them all)")
	return cmd
}

func newLabDownCmd() *cobra.Command {
	var dir string
	cmd := &cobra.Command{
		Use:   "down",
		Short: "Stop the lab running from --dir, or clean up after one that died",
		Long: `Signals the ` + "`parity lab up`" + ` whose pid file is in --dir and waits until it has
stopped its jobs, agents and controller and removed its cgroups. When no
lab runs there (it crashed or was killed), kills what is left in its
cgroups and removes them. Then it removes the directory but the lab's
logs (DIR/lab.log, DIR/logs/), and says where they are.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runLabDown(cmd.Context(), cmd.OutOrStdout(), dir) },
	}
	cmd.Flags().StringVar(&dir, "dir", defaultLabDir(), "directory of the lab to stop")
	return cmd
}

// labHandle is a running lab, in one process or as several.
type labHandle struct {
	addr      string
	isolation bool
	why       string
	token     func(user string, role auth.Role) (string, error)
	down      func(ctx context.Context) error
}

// labRun is how `lab up` runs a lab.
type labRun struct {
	processes   bool
	controllers int
}

func startLab(ctx context.Context, lab *labfile.Lab, dir string, users []string, log *slog.Logger, how labRun) (labHandle, error) {
	if how.processes {
		p, err := cluster.UpProcesses(ctx, cluster.ProcOptions{Lab: lab, Dir: dir, Users: users, Logger: log, Controllers: how.controllers})
		if err != nil {
			return labHandle{}, err
		}
		return labHandle{addr: p.Addr, isolation: p.Isolation, why: p.IsolationOf, token: p.Token, down: p.Down}, nil
	}
	c, err := cluster.Up(ctx, cluster.Options{Lab: lab, Dir: dir, Users: users, Logger: log, Controllers: how.controllers})
	if err != nil {
		return labHandle{}, err
	}
	return labHandle{addr: c.Addr, isolation: c.Isolation, why: c.IsolationOf, token: c.Token, down: c.Down}, nil
}

func runLabUp(ctx context.Context, out io.Writer, name, dir string, run labRun) error {
	lab, err := labfile.Resolve(name)
	if err != nil {
		return usageError("lab up", "%v", err)
	}
	switch run.controllers {
	case 1, 3, 5:
	default:
		return usageError("lab up", "--controllers=%d: a lab runs 1, 3 or 5 controllers (a majority must acknowledge every change)", run.controllers)
	}
	if pid, alive := labRunning(dir); alive {
		return usageError("lab up", "a lab already runs from %s (pid %d); stop it with `parity lab down --dir %s`", dir, pid, dir)
	}
	if err := prepareLabDir(dir); err != nil {
		return &exitError{code: 1, err: fmt.Errorf("lab up: %w", err)}
	}
	logf, err := os.OpenFile(filepath.Join(dir, labLogFile), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return &exitError{code: 1, err: fmt.Errorf("lab up: %w", err)}
	}
	defer logf.Close()
	how := "in this process"
	if run.processes {
		how = "as separate processes"
	}
	if run.controllers > 1 {
		how += fmt.Sprintf(", %d controllers", run.controllers)
	}
	fmt.Fprintf(out, "Starting lab %s (%d nodes) in %s, %s …\n", lab.Name, len(lab.NodeList()), dir, how)
	users := labUsers()
	// Name and pid files come first: lab down needs them to stop this lab,
	// or clean up its cgroups and daemons, even while it starts.
	err = os.WriteFile(filepath.Join(dir, labNameFile), []byte(lab.Name+"\n"), 0o644)
	if err == nil {
		err = os.WriteFile(filepath.Join(dir, labPidFile), []byte(strconv.Itoa(os.Getpid())+"\n"), 0o644)
	}
	if err != nil {
		return &exitError{code: 1, err: fmt.Errorf("lab up: %w", err)}
	}
	defer func() {
		os.Remove(filepath.Join(dir, labPidFile))
	}()
	h, err := startLab(ctx, lab, dir, users, slog.New(slog.NewTextHandler(logf, nil)), run)
	if err != nil {
		return &exitError{code: 1, err: fmt.Errorf("lab up: %w", err)}
	}
	if err := writeLabTokens(out, h, dir, users); err != nil {
		h.down(context.WithoutCancel(ctx))
		return &exitError{code: 1, err: fmt.Errorf("lab up: %w", err)}
	}
	if !h.isolation {
		fmt.Fprintf(out, "WARNING: jobs run without isolation: %s\n", h.why)
	}
	fmt.Fprintf(out, "Lab %s is up. Interrupt (Ctrl-C) or run `parity lab down --dir %s` to stop it.\n", lab.Name, dir)
	<-ctx.Done()
	fmt.Fprintln(out, "Stopping the lab …")
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Minute)
	defer cancel()
	if err := h.down(dctx); err != nil {
		return &exitError{code: 1, err: fmt.Errorf("lab up: stopping: %w", err)}
	}
	fmt.Fprintln(out, "Lab stopped.")
	return nil
}

// prepareLabDir creates the lab directory, searchable by the job user, with
// a work directory anyone may write.
func prepareLabDir(dir string) error {
	if err := os.MkdirAll(filepath.Join(dir, "work"), 0o755); err != nil {
		return err
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		return err
	}
	return os.Chmod(filepath.Join(dir, "work"), 0o1777)
}

// labUsers are the people besides root, admin and nobody who may submit:
// whoever ran the command (through sudo, too).
func labUsers() []string {
	var out []string
	for _, u := range []string{os.Getenv("SUDO_USER"), os.Getenv("USER")} {
		if u != "" && u != "root" && !strings.Contains(strings.Join(out, ","), u) {
			out = append(out, u)
		}
	}
	return out
}

// writeLabTokens writes DIR/tokens/<user> and DIR/env and prints where
// they are. A person's token file is theirs to read.
func writeLabTokens(out io.Writer, c labHandle, dir string, users []string) error {
	tdir := filepath.Join(dir, "tokens")
	if err := os.MkdirAll(tdir, 0o755); err != nil {
		return err
	}
	// The exported token is root's: jobs run as their submitter, so the
	// identity must be a real account on the nodes ("admin" is not).
	admin := ""
	for _, u := range append([]string{"root", "admin", "nobody"}, users...) {
		tok, err := c.token(u, "")
		if err != nil {
			return err
		}
		path := filepath.Join(tdir, u)
		if err := os.WriteFile(path, []byte(tok+"\n"), 0o600); err != nil {
			return err
		}
		if pw, err := user.Lookup(u); err == nil {
			uid, _ := strconv.Atoi(pw.Uid)
			gid, _ := strconv.Atoi(pw.Gid)
			_ = os.Chown(path, uid, gid)
		}
		if u == "root" {
			admin = tok
		}
	}
	export := fmt.Sprintf("export %s=%s %s=%s", client.EnvController, c.addr, client.EnvToken, admin)
	if err := os.WriteFile(filepath.Join(dir, "env"), []byte(export+"\n"), 0o600); err != nil {
		return err
	}
	fmt.Fprintf(out, "Controller: %s\nTokens:     %s/<user> (root, admin, nobody%s)\nWork dir:   %s\n%s\n",
		c.addr, tdir, prefixEach(", ", users), filepath.Join(dir, "work"), export)
	return nil
}

func prefixEach(sep string, xs []string) string {
	var b strings.Builder
	for _, x := range xs {
		b.WriteString(sep + x)
	}
	return b.String()
}

// labRunning reads DIR's pid file and reports whether that process is a
// live `lab up`.
func labRunning(dir string) (int, bool) {
	b, err := os.ReadFile(filepath.Join(dir, labPidFile))
	if err != nil {
		return 0, false
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 {
		return 0, false
	}
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil || !strings.Contains(string(cmdline), "lab") {
		return pid, false // gone, or the pid was reused
	}
	return pid, procAlive(pid)
}

// procAlive reports whether pid runs: it exists and is not a zombie
// (an exited child its parent has not reaped yet).
func procAlive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 || i+2 >= len(b) {
		return false
	}
	state := b[i+2]
	return state != 'Z' && state != 'X'
}

func runLabDown(ctx context.Context, out io.Writer, dir string) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		fmt.Fprintf(out, "No lab in %s.\n", dir)
		return nil
	}
	if logs, _ := cluster.Logs(dir); err == nil && len(entries) == len(logs) && len(logs) > 0 {
		fmt.Fprintf(out, "No lab in %s; the last one's logs are there: %s.\n", dir, strings.Join(logs, ", "))
		return nil
	}
	name := "default"
	if b, err := os.ReadFile(filepath.Join(dir, labNameFile)); err == nil {
		name = strings.TrimSpace(string(b))
	}
	// This instance's groups only: another run of the same lab from
	// another directory keeps its own.
	croot, err := cluster.CgroupRoot(name, dir)
	if err != nil {
		return &exitError{code: 1, err: fmt.Errorf("lab down: %w", err)}
	}
	pid, alive := labRunning(dir)
	switch {
	case alive:
		fmt.Fprintf(out, "Stopping lab %s (pid %d) …\n", name, pid)
		if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
			return &exitError{code: 1, err: fmt.Errorf("lab down: signal pid %d: %w", pid, err)}
		}
		if err := waitLabGone(ctx, dir, pid); err != nil {
			return &exitError{code: 1, err: fmt.Errorf("lab down: %w", err)}
		}
		if _, err := os.Stat(filepath.Join(dir, labPidFile)); err == nil {
			fmt.Fprintln(out, "The lab exited without cleaning up; removing what it left.")
			if err := cleanStaleLab(ctx, out, dir, croot); err != nil {
				return &exitError{code: 1, err: fmt.Errorf("lab down: %w", err)}
			}
		}
	case pid != 0:
		// A pid file without its process: the lab crashed or was killed;
		// its jobs and cgroups may remain.
		fmt.Fprintf(out, "Lab %s (pid %d) is gone; removing what it left.\n", name, pid)
		if err := cleanStaleLab(ctx, out, dir, croot); err != nil {
			return &exitError{code: 1, err: fmt.Errorf("lab down: %w", err)}
		}
	}
	logs, err := cluster.RemoveKeepingLogs(dir)
	if err != nil {
		return &exitError{code: 1, err: fmt.Errorf("lab down: %w", err)}
	}
	if len(logs) == 0 {
		fmt.Fprintf(out, "Lab %s stopped; %s removed.\n", name, dir)
		return nil
	}
	fmt.Fprintf(out, "Lab %s stopped; its state in %s removed, its logs kept: %s.\n", name, dir, strings.Join(logs, ", "))
	return nil
}

// waitLabGone waits until the lab process exits (its pid file goes first).
func waitLabGone(ctx context.Context, dir string, pid int) error {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		if !procAlive(pid) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the lab (pid %d) did not stop: %w", pid, ctx.Err())
		case <-tick.C:
		}
	}
}

// cleanStaleLab stops the daemons a dead process lab left (by their pid
// files), then kills what remains in its cgroups and removes them.
func cleanStaleLab(ctx context.Context, out io.Writer, dir, cgroupRoot string) error {
	return errors.Join(cluster.StopStale(ctx, dir, out), cluster.RemoveCgroups(cgroupRoot), cluster.RemoveRuntimeDir(dir))
}
