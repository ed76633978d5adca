package reports

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"time"
)

// historyLayout names a run's report.json in a history directory by the
// run's start (UTC, nanoseconds): fixed width, so names sort by time.
const historyLayout = "20060102T150405.000000000Z"

var historyName = regexp.MustCompile(`^report-\d{8}T\d{6}\.\d{9}Z\.json$`)

// HistoryFile is the name SaveHistory gives a run started at t.
func HistoryFile(t time.Time) string {
	return "report-" + t.UTC().Format(historyLayout) + ".json"
}

// HistoryProblem is a file of a history directory that could not be read;
// ReadHistory leaves it out rather than failing the night's run.
type HistoryProblem struct {
	Path string
	Err  error
}

func (p HistoryProblem) Error() string { return fmt.Sprintf("history %s: %v", p.Path, p.Err) }

// ReadHistory reads the runs SaveHistory kept in dir, oldest first. A
// missing dir is an empty history. Files that do not parse are returned
// as problems and left out, so one damaged night does not stop the next.
func ReadHistory(dir string) (History, []HistoryProblem, error) {
	names, err := historyFiles(dir)
	if err != nil {
		return History{}, nil, err
	}
	var h History
	var problems []HistoryProblem
	for _, name := range names {
		path := filepath.Join(dir, name)
		f, err := os.Open(path)
		if err != nil {
			problems = append(problems, HistoryProblem{Path: path, Err: err})
			continue
		}
		r, err := readHistoryRun(f)
		f.Close()
		if err != nil {
			problems = append(problems, HistoryProblem{Path: path, Err: err})
			continue
		}
		h.Runs = append(h.Runs, r)
	}
	// Names sort by start already; sorting by the recorded start as well
	// keeps the order right for files copied in under other clocks' names.
	slices.SortStableFunc(h.Runs, compareStarted)
	return h, problems, nil
}

// historyRun is the part of a report.json a history needs: statuses and
// durations, not evidence, timelines or telemetry, which are most of a
// report's bytes. Decoding into it skips them, so a year of nights read
// every night costs a scan, not a year of allocations.
type historyRun struct {
	SchemaVersion int `json:"schemaVersion"`
	Run
	Specs []struct {
		ID       string        `json:"id"`
		Area     string        `json:"area"`
		Name     string        `json:"name"`
		Vendor   string        `json:"vendor,omitempty"`
		Status   Status        `json:"status"`
		Reason   string        `json:"reason,omitempty"`
		Duration time.Duration `json:"durationNs"`
	} `json:"specs"`
	Timeline skipJSON `json:"timeline"`
	Series   skipJSON `json:"series"`
}

// skipJSON takes a value without keeping it.
type skipJSON struct{}

func (*skipJSON) UnmarshalJSON([]byte) error { return nil }

// readHistoryRun reads the history's part of a report.json and
// validates it as ReadJSON does.
func readHistoryRun(rd io.Reader) (*Run, error) {
	var doc historyRun
	if err := json.NewDecoder(rd).Decode(&doc); err != nil {
		return nil, fmt.Errorf("reports: read json: %w", err)
	}
	if doc.SchemaVersion != SchemaVersion {
		return nil, fmt.Errorf("%w: schemaVersion %d (this reader knows %d)", ErrSchema, doc.SchemaVersion, SchemaVersion)
	}
	r := doc.Run
	r.Specs = make([]SpecResult, len(doc.Specs))
	for i, s := range doc.Specs {
		r.Specs[i] = SpecResult{ID: s.ID, Area: s.Area, Name: s.Name, Vendor: s.Vendor, Status: s.Status, Reason: s.Reason, Duration: s.Duration}
	}
	if err := r.Validate(); err != nil {
		return nil, err
	}
	return &r, nil
}

// historyFiles lists dir's history files in name (time) order.
func historyFiles(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reports: history %q: %w", dir, err)
	}
	var names []string
	for _, e := range ents {
		if e.Type().IsRegular() && historyName.MatchString(e.Name()) {
			names = append(names, e.Name())
		}
	}
	slices.Sort(names)
	return names, nil
}

// SaveHistory stores the report.json bytes of run r in dir (created if
// missing) under HistoryFile(r.Started), then removes the oldest history
// files beyond keep (keep <= 0 keeps all). It returns the file written
// and those removed. A different report already stored under the same
// name is an error; the same bytes again are not (a rerun of the save).
func SaveHistory(dir string, r *Run, reportJSON []byte, keep int) (path string, removed []string, err error) {
	if r.Started.IsZero() {
		return "", nil, fmt.Errorf("%w: run %q has no start time to file it under in the history", ErrInvalid, r.ID)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", nil, fmt.Errorf("reports: history %q: %w", dir, err)
	}
	path = filepath.Join(dir, HistoryFile(r.Started))
	old, err := os.ReadFile(path)
	switch {
	case err == nil && !bytes.Equal(old, reportJSON):
		return "", nil, fmt.Errorf("reports: history %q already holds a different run started at %s", path,
			r.Started.UTC().Format(time.RFC3339Nano))
	case err == nil:
	case errors.Is(err, os.ErrNotExist):
		if err := writeAtomic(path, reportJSON); err != nil {
			return "", nil, err
		}
	default:
		return "", nil, fmt.Errorf("reports: history %q: %w", path, err)
	}
	if keep <= 0 {
		return path, nil, nil
	}
	names, err := historyFiles(dir)
	if err != nil {
		return path, nil, err
	}
	for _, name := range names[:len(names)-min(keep, len(names))] {
		p := filepath.Join(dir, name)
		if err := os.Remove(p); err != nil {
			return path, removed, fmt.Errorf("reports: history: remove %q: %w", p, err)
		}
		removed = append(removed, p)
	}
	return path, removed, nil
}

// compareStarted orders runs by start, then ID, for stable output.
func compareStarted(a, b *Run) int {
	return cmp.Or(a.Started.Compare(b.Started), cmp.Compare(a.ID, b.ID))
}
