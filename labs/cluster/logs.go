package cluster

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// LogsDir is the folder of a lab's directory that holds its daemons'
// logs (a process lab's controller and agents). It and the *.log files
// directly in the directory (the lab process's own) are the lab's logs.
const LogsDir = "logs"

// Logs lists the lab's logs in dir, as paths.
func Logs(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		if isLog(e) {
			out = append(out, filepath.Join(dir, e.Name()))
		}
	}
	return out, nil
}

func isLog(e fs.DirEntry) bool {
	if e.Name() == LogsDir {
		return e.IsDir()
	}
	return e.Type().IsRegular() && strings.HasSuffix(e.Name(), ".log")
}

// RemoveKeepingLogs removes what the lab left in dir (its state, node
// roots, tokens, work directory, pid files) but its logs, which are what
// one reads to learn why a lab went wrong once it is gone; an empty logs
// folder goes too. It returns the logs kept; with none, dir itself is
// removed.
func RemoveKeepingLogs(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("cluster: remove lab %s: %w", dir, err)
	}
	var kept []string
	var errs []error
	for _, e := range entries {
		p := filepath.Join(dir, e.Name())
		if isLog(e) {
			if e.IsDir() && os.Remove(p) == nil {
				continue // empty
			}
			kept = append(kept, p)
			continue
		}
		if err := os.RemoveAll(p); err != nil {
			errs = append(errs, fmt.Errorf("cluster: remove %s: %w", p, err))
		}
	}
	if len(kept) == 0 && len(errs) == 0 {
		if err := os.Remove(dir); err != nil {
			errs = append(errs, fmt.Errorf("cluster: remove lab %s: %w", dir, err))
		}
	}
	return kept, errors.Join(errs...)
}
