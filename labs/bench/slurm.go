package bench

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// SlurmOptions say where the Slurm side is.
type SlurmOptions struct {
	// Conf is the SLURM_CONF of a running Slurm (default: $SLURM_CONF).
	Conf string
	// Anchor, when set, is the slurm-anchor directory whose up.sh starts
	// Slurm (4 nodes × 8 fake H100) in StateDir, and whose down.sh stops
	// it afterwards if this run started it.
	Anchor   string
	StateDir string
}

// slurmSide drives a running Slurm through its commands.
type slurmSide struct {
	env []string
	// stop stops a Slurm this run started (nil otherwise).
	stop func(context.Context) error
}

// startSlurm finds (or starts, through the anchor) a Slurm that answers
// and has an empty queue, which the bench needs to itself.
func startSlurm(ctx context.Context, o SlurmOptions, progress func(string, ...any)) (*slurmSide, error) {
	s := &slurmSide{}
	conf := o.Conf
	if o.Anchor != "" {
		dir := o.StateDir
		if dir == "" {
			dir = "/tmp/sa"
		}
		conf = filepath.Join(dir, "slurm.conf")
		s.env = []string{"SLURM_CONF=" + conf}
		// No configuration there: no Slurm of the anchor's runs, and
		// asking sinfo would only wait out its connect timeout (a minute).
		if !fileExists(conf) || !slurmAnswers(ctx, s.env) {
			fresh := !fileExists(dir)
			progress("starting Slurm with %s/up.sh %s", o.Anchor, dir)
			if _, err := runCmd(ctx, nil, "bash", filepath.Join(o.Anchor, "up.sh"), dir); err != nil {
				return nil, fmt.Errorf("bench: start slurm: %w", err)
			}
			s.stop = anchorStop(o.Anchor, dir, fresh)
		}
	}
	if conf == "" {
		conf = os.Getenv("SLURM_CONF")
	}
	if conf == "" {
		return nil, errors.New("bench: no Slurm: SLURM_CONF is unset and no --slurm-anchor was given")
	}
	s.env = []string{"SLURM_CONF=" + conf}
	if err := s.waitIdle(ctx); err != nil {
		s.close(ctx)
		return nil, err
	}
	n, err := s.active(ctx)
	if err == nil && n > 0 {
		err = fmt.Errorf("bench: the Slurm queue holds %d jobs; the bench needs it empty", n)
	}
	if err != nil {
		s.close(ctx)
		return nil, err
	}
	return s, nil
}

// waitIdle waits until sinfo shows an idle node (slurmd registered).
func (s *slurmSide) waitIdle(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	for {
		out, err := runCmd(ctx, s.env, "sinfo", "-h", "-o", "%T")
		if err == nil && strings.Contains(out, "idle") {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("bench: slurm has no idle node (sinfo: %q, %v): %w", out, err, ctx.Err())
		case <-time.After(500 * time.Millisecond): // polling slurmctld, not synchronising
		}
	}
}

func (s *slurmSide) close(ctx context.Context) error {
	if s.stop == nil {
		return nil
	}
	return s.stop(ctx)
}

func (s *slurmSide) name() string { return "slurm" }

func (s *slurmSide) submit(ctx context.Context, args ...string) (string, error) {
	out, err := runCmd(ctx, s.env, append([]string{"sbatch"}, args...)...)
	if err != nil {
		return "", err
	}
	return parsableID(out)
}

func (s *slurmSide) submitBulk(ctx context.Context, args ...string) (string, error) {
	return s.submit(ctx, args...)
}

func (s *slurmSide) bulkHow() string { return "sbatch processes" }

func (s *slurmSide) active(ctx context.Context) (int, error) {
	out, err := runCmd(ctx, s.env, "squeue", "-h", "-r", "-o", "%i")
	if err != nil {
		return 0, err
	}
	if out == "" {
		return 0, nil
	}
	return strings.Count(out, "\n") + 1, nil
}

func (s *slurmSide) running(ctx context.Context, id string) (bool, error) {
	out, err := runCmd(ctx, s.env, "squeue", "-h", "-j", id, "-o", "%T")
	return strings.TrimSpace(out) == "RUNNING", err
}

func (s *slurmSide) cancel(ctx context.Context, id string) error {
	_, err := runCmd(ctx, s.env, "scancel", id)
	return err
}

// passWindow resets sdiag's counters and reads them back at the end.
func (s *slurmSide) passWindow(ctx context.Context) (func(context.Context) (PassStats, error), error) {
	if _, err := runCmd(ctx, s.env, "sdiag", "-r"); err != nil {
		return nil, err
	}
	return func(ctx context.Context) (PassStats, error) {
		out, err := runCmd(ctx, s.env, "sdiag")
		if err != nil {
			return PassStats{}, err
		}
		return parseSdiag(out)
	}, nil
}

// parseSdiag reads sdiag's "Main schedule statistics" (microseconds):
// the main scheduler's cycles, and the backfill cycles for the note.
func parseSdiag(out string) (PassStats, error) {
	sections := map[string]map[string]string{}
	var cur map[string]string
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "Main schedule statistics"):
			cur = map[string]string{}
			sections["main"] = cur
		case strings.HasPrefix(line, "Backfilling stats"):
			cur = map[string]string{}
			sections["backfill"] = cur
		case !strings.HasPrefix(line, "\t") && !strings.HasPrefix(line, " "):
			cur = nil
		case cur != nil:
			k, v, ok := strings.Cut(strings.TrimSpace(line), ":")
			if ok {
				cur[strings.TrimSpace(k)] = strings.TrimSpace(v)
			}
		}
	}
	main := sections["main"]
	if main == nil {
		return PassStats{}, errors.New("bench: sdiag printed no \"Main schedule statistics\" section")
	}
	num := func(sec map[string]string, key string) (int64, error) {
		v, ok := sec[key]
		if !ok {
			return 0, nil // sdiag omits means before the first cycle
		}
		n, err := strconv.ParseInt(strings.Fields(v + " x")[0], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("bench: sdiag %q = %q: %w", key, v, err)
		}
		return n, nil
	}
	var ps PassStats
	var errs []error
	get := func(sec map[string]string, key string) int64 {
		n, err := num(sec, key)
		errs = append(errs, err)
		return n
	}
	ps.Passes = int(get(main, "Total cycles"))
	ps.Mean = time.Duration(get(main, "Mean cycle")) * time.Microsecond
	ps.Last = time.Duration(get(main, "Last cycle")) * time.Microsecond
	depth, queue := get(main, "Mean depth cycle"), get(main, "Last queue length")
	ps.Note = fmt.Sprintf("sdiag main schedule: mean depth %d jobs/cycle, last queue length %d", depth, queue)
	if bf := sections["backfill"]; bf != nil {
		n, mean := get(bf, "Total cycles"), get(bf, "Mean cycle")
		ps.Note += fmt.Sprintf("; backfill: %d cycles, mean %.1f ms", n, float64(mean)/1000)
	}
	return ps, errors.Join(errs...)
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// slurmAnswers reports whether the controller of env's Slurm answers.
func slurmAnswers(ctx context.Context, env []string) bool {
	_, err := runCmd(ctx, env, "sinfo", "-h")
	return err == nil
}

// anchorStop stops the Slurm the anchor's up.sh started in dir. A
// directory this run made (fresh) goes too, once its daemons have saved
// their state and gone: a job Slurm did not finish would otherwise come
// back and stop the next run.
func anchorStop(anchor, dir string, fresh bool) func(context.Context) error {
	return func(ctx context.Context) error {
		pids := anchorPids(dir)
		if _, err := runCmd(ctx, nil, "bash", filepath.Join(anchor, "down.sh"), dir); err != nil {
			return err
		}
		if !fresh {
			return nil
		}
		if err := waitGone(ctx, pids); err != nil {
			return err
		}
		return os.RemoveAll(dir)
	}
}

// anchorPids reads the anchor's daemons' pid files in dir.
func anchorPids(dir string) []int {
	files, _ := filepath.Glob(filepath.Join(dir, "*.pid"))
	var pids []int
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && pid > 0 {
			pids = append(pids, pid)
		}
	}
	return pids
}

// waitGone waits until none of pids runs (slurmctld saves its state as
// it stops), for at most a minute.
func waitGone(ctx context.Context, pids []int) error {
	return poll(ctx, time.Minute, func() (bool, error) {
		for _, pid := range pids {
			if syscall.Kill(pid, 0) == nil {
				return false, nil
			}
		}
		return true, nil
	}, "the Slurm daemons to stop")
}
