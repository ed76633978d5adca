package compat

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Side runs Slurm's commands (sbatch, scontrol, squeue, scancel) on one
// cluster: the real Slurm or Parity.
type Side interface {
	// Run runs argv in dir with env added to the side's own environment
	// and returns its standard output, standard error and exit status.
	Run(ctx context.Context, dir string, env map[string]string, argv ...string) (stdout, stderr string, code int)
}

// Answer is what one side made of a case, as printed: the corpus keeps
// Slurm's raw, so a better normaliser needs no new recording.
type Answer struct {
	Accepted bool `json:"accepted"`
	// Error is the first line of sbatch's standard error when refused.
	Error string `json:"error,omitempty"`
	// Record is the `scontrol show job -o` line and Queue the squeue -o
	// line (queueCodes, '|' between) of an accepted held job.
	Record string `json:"record,omitempty"`
	Queue  string `json:"queue,omitempty"`
	// WillRun is the --test-only line.
	WillRun string `json:"willRun,omitempty"`
	// Dir, JobID and Prev are the case's directory, its job's id and the
	// {PREV} job's id on that side, which the normaliser replaces.
	Dir   string `json:"dir,omitempty"`
	JobID string `json:"jobId,omitempty"`
	Prev  string `json:"prev,omitempty"`
}

// fields is the answer's normalised fields: the record's, then squeue's
// codes, then the --test-only line.
func (a *Answer) fields() map[string]string {
	n := ids{job: a.JobID, prev: a.Prev}
	out := map[string]string{}
	if a.Record != "" {
		out = NormaliseRecord(a.Record, a.Dir, n)
	}
	if a.Queue != "" {
		for k, v := range NormaliseQueue(a.Queue, a.Dir, n) {
			out[k] = v
		}
	}
	if a.WillRun != "" {
		out["sbatch --test-only"] = normaliseText(a.WillRun, a.Dir)
	}
	return out
}

// scriptName is the file each case's script is written to.
const scriptName = "job.sh"

// Prev submits the held job {PREV} names and returns its id.
func Prev(ctx context.Context, s Side, dir string) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("compat: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, scriptName), []byte("#!/bin/bash\nhostname\n"), 0o644); err != nil {
		return "", fmt.Errorf("compat: %w", err)
	}
	out, errs, code := s.Run(ctx, dir, nil, "sbatch", "--hold", "--parsable", "-J", "prev", scriptName)
	if code != 0 {
		return "", fmt.Errorf("compat: submit the {PREV} job: exit %d: %s", code, strings.TrimSpace(errs))
	}
	return strings.TrimSpace(out), nil
}

// Run submits c in its own directory under base and returns the side's
// answer; an accepted job is cancelled afterwards, so no case sees
// another's (singleton dependencies would).
func Run(ctx context.Context, s Side, base, prev string, c Case) (*Answer, error) {
	dir := filepath.Join(base, c.ID)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("compat: %w", err)
	}
	sub := func(v string) string { return strings.ReplaceAll(v, "{PREV}", prev) }
	if err := os.WriteFile(filepath.Join(dir, scriptName), []byte(sub(c.Script)), 0o644); err != nil {
		return nil, fmt.Errorf("compat: %w", err)
	}
	env := map[string]string{}
	for k, v := range c.Env {
		env[k] = sub(v)
	}
	mode := "--hold"
	if c.TestOnly {
		mode = "--test-only"
	}
	argv := []string{"sbatch", mode, "--parsable"}
	for _, a := range c.Args {
		argv = append(argv, sub(a))
	}
	argv = append(argv, scriptName)
	out, errs, code := s.Run(ctx, dir, env, argv...)
	a := &Answer{Accepted: code == 0, Dir: dir, Prev: prev}
	if code != 0 {
		a.Error = firstLine(errs)
		return a, nil
	}
	if c.TestOnly {
		a.WillRun = lastLine(errs)
		return a, nil
	}
	id, _, _ := strings.Cut(strings.TrimSpace(out), ";")
	a.JobID = id
	defer s.Run(ctx, dir, nil, "scancel", id)
	rec, errs, code := s.Run(ctx, dir, nil, "scontrol", "show", "job", "-o", id)
	if code != 0 {
		return nil, fmt.Errorf("compat: %s: scontrol show job %s: exit %d: %s", c.ID, id, code, strings.TrimSpace(errs))
	}
	a.Record = firstLine(rec)
	a.Queue = queue(ctx, s, dir, id)
	return a, nil
}

// queue is the job's squeue -o line; when the side refuses the format,
// each code is asked alone and a refused one records the refusal.
func queue(ctx context.Context, s Side, dir, id string) string {
	q, _, code := s.Run(ctx, dir, nil, "squeue", "-h", "-j", id, "-o", queueFormat())
	if code == 0 {
		return firstLine(q)
	}
	out := make([]string, len(queueCodes))
	for i, c := range queueCodes {
		q, errs, code := s.Run(ctx, dir, nil, "squeue", "-h", "-j", id, "-o", c)
		out[i] = firstLine(q)
		if code != 0 {
			out[i] = "error: " + firstLine(errs)
		}
	}
	return strings.Join(out, "|")
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(strings.TrimLeft(s, "\n"), "\n")
	return l
}

func lastLine(s string) string {
	s = strings.TrimRight(s, "\n")
	return s[strings.LastIndexByte(s, '\n')+1:]
}
