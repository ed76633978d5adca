package bench

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/parityhpc/parity/labs/cluster"
	"github.com/parityhpc/parity/labs/labfile"
	"github.com/parityhpc/parity/scheduler/client"
	"github.com/parityhpc/parity/scheduler/client/format"
	"github.com/parityhpc/parity/scheduler/jobspec"
)

// ParityOptions say how to run the Parity side.
type ParityOptions struct {
	// Lab is the lab to start (the default is the built-in slurm-anchor:
	// 4 nodes × 8 H100, the shape of Slurm's anchor).
	Lab *labfile.Lab
	// Dir holds the lab's state; the caller removes it.
	Dir string
	// Exe is the parity command line that submissions run as
	// `Exe... submit ...` (a separate process each, like sbatch).
	Exe []string
	// Shim supervises each job (default: the lab's own default).
	Shim   []string
	Logger *slog.Logger
}

// paritySide drives a running lab.
type paritySide struct {
	c       *cluster.Cluster
	cl      *client.Client
	exe     []string
	env     []string
	metrics string
	workDir string
}

// startParity brings the lab up with its metrics listener on.
func startParity(ctx context.Context, o ParityOptions) (*paritySide, error) {
	if len(o.Exe) == 0 {
		return nil, fmt.Errorf("bench: no parity command for submissions")
	}
	lab := o.Lab
	if lab == nil {
		var err error
		if lab, err = labfile.Builtin("slurm-anchor"); err != nil {
			return nil, err
		}
	}
	c, err := cluster.Up(ctx, cluster.Options{Lab: lab, Dir: o.Dir, Shim: o.Shim, Logger: o.Logger, MetricsAddr: "127.0.0.1:0"})
	if err != nil {
		return nil, fmt.Errorf("bench: lab %s: %w", lab.Name, err)
	}
	p := &paritySide{c: c, exe: o.Exe, metrics: c.MetricsAddr, workDir: c.Dir}
	// Jobs run as their submitter, who must exist on the nodes: root.
	tok, err := c.Token("root", "")
	if err == nil {
		p.cl, err = client.Dial(ctx, c.Addr, tok)
	}
	if err != nil {
		c.Down(context.WithoutCancel(ctx))
		return nil, fmt.Errorf("bench: lab client: %w", err)
	}
	p.env = []string{client.EnvController + "=" + c.Addr, client.EnvToken + "=" + tok}
	return p, nil
}

func (p *paritySide) close(ctx context.Context) error {
	p.cl.Close()
	return p.c.Down(ctx)
}

func (p *paritySide) name() string { return "parity" }

func (p *paritySide) submit(ctx context.Context, args ...string) (string, error) {
	argv := append(append(append([]string{}, p.exe...), "submit"), args...)
	out, err := runCmd(ctx, p.env, argv...)
	if err != nil {
		return "", err
	}
	return parsableID(out)
}

// submitBulk parses the sbatch options as `parity submit` does and sends
// the job over the API: the backlog's submission is not what (c) measures,
// and thousands of processes would only measure process start-up again.
func (p *paritySide) submitBulk(ctx context.Context, args ...string) (string, error) {
	req, err := jobspec.Parse(nil, args, map[string]string{"PATH": "/usr/bin:/bin", "USER": "root"},
		jobspec.ParseOptions{Now: time.Now(), User: "root", SubmitDir: p.workDir})
	if err != nil {
		return "", fmt.Errorf("bench: backlog job options %q: %w", args, err)
	}
	id, err := p.cl.Submit(ctx, format.Spec(req))
	if err != nil {
		return "", err
	}
	return strconv.FormatUint(id, 10), nil
}

func (p *paritySide) bulkHow() string { return "API calls from the bench process" }

func (p *paritySide) active(ctx context.Context) (int, error) {
	info, err := p.cl.Info(ctx)
	if err != nil {
		return 0, err
	}
	by := info.GetJobsByState()
	return int(by["PENDING"] + by["RUNNING"] + by["COMPLETING"]), nil
}

func (p *paritySide) running(ctx context.Context, id string) (bool, error) {
	n, err := strconv.ParseUint(id, 10, 64)
	if err != nil {
		return false, fmt.Errorf("bench: job id %q: %w", id, err)
	}
	j, err := p.cl.GetJob(ctx, n, false)
	if err != nil {
		return false, err
	}
	return j.GetState() == "RUNNING", nil
}

func (p *paritySide) cancel(ctx context.Context, id string) error {
	n, err := strconv.ParseUint(id, 10, 64)
	if err != nil {
		return fmt.Errorf("bench: job id %q: %w", id, err)
	}
	_, err = p.cl.CancelJob(ctx, n)
	return err
}

// passWindow reads the controller's pass-duration histogram at both ends
// of the window: its sum and count give the window's mean.
func (p *paritySide) passWindow(ctx context.Context) (func(context.Context) (PassStats, error), error) {
	sum0, n0, err := p.scrapePasses(ctx)
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context) (PassStats, error) {
		sum1, n1, err := p.scrapePasses(ctx)
		if err != nil {
			return PassStats{}, err
		}
		info, err := p.cl.Info(ctx)
		if err != nil {
			return PassStats{}, err
		}
		ps := PassStats{Passes: int(n1 - n0), Last: info.GetLastPassDuration().AsDuration(),
			Note: "core.Schedule over every pending job (parity_schedule_pass_duration_seconds)"}
		if ps.Passes > 0 {
			ps.Mean = time.Duration((sum1 - sum0) / (n1 - n0) * float64(time.Second))
		}
		return ps, nil
	}, nil
}

func (p *paritySide) scrapePasses(ctx context.Context) (sum, count float64, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+p.metrics+"/metrics", nil)
	if err != nil {
		return 0, 0, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, 0, fmt.Errorf("bench: scrape controller metrics: %w", err)
	}
	defer resp.Body.Close()
	return passHistogram(resp.Body)
}

// passHistogram reads the pass-duration histogram's sum and count from
// Prometheus text exposition.
func passHistogram(r io.Reader) (sum, count float64, err error) {
	const name = "parity_schedule_pass_duration_seconds"
	seen := 0
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 2 {
			continue
		}
		var dst *float64
		switch f[0] {
		case name + "_sum":
			dst = &sum
		case name + "_count":
			dst = &count
		default:
			continue
		}
		v, err := strconv.ParseFloat(f[1], 64)
		if err != nil {
			return 0, 0, fmt.Errorf("bench: metrics %s value %q: %w", f[0], f[1], err)
		}
		*dst = v
		seen++
	}
	if err := sc.Err(); err != nil {
		return 0, 0, err
	}
	if seen != 2 {
		return 0, 0, fmt.Errorf("bench: metrics carry no %s histogram", name)
	}
	return sum, count, nil
}
