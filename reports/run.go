package reports

import (
	"errors"
	"fmt"
	"time"
)

// ErrInvalid is wrapped by every validation error, so callers can tell a
// malformed tree from an I/O failure.
var ErrInvalid = errors.New("reports: invalid run")

// Status is the outcome of one spec for one vendor.
type Status string

// Statuses. Error means the spec could not reach a verdict (harness or
// target trouble), as opposed to Failed, where the system misbehaved.
const (
	StatusPassed  Status = "passed"
	StatusFailed  Status = "failed"
	StatusSkipped Status = "skipped"
	StatusError   Status = "error"
)

// Failing reports whether the status counts as a failure (failed or error).
func (s Status) Failing() bool { return s == StatusFailed || s == StatusError }

func (s Status) valid() bool {
	switch s {
	case StatusPassed, StatusFailed, StatusSkipped, StatusError:
		return true
	}
	return false
}

// Spec areas, in the order reports show them. Other non-empty areas are
// allowed (plugin suites may add their own) and sort after these.
const (
	AreaPlacement      = "placement"
	AreaIsolation      = "isolation"
	AreaAccounting     = "accounting"
	AreaHealth         = "health"
	AreaDriverContract = "driver-contract"
	AreaParity         = "parity"
)

// Timeline event kinds. Others are allowed and drawn as generic markers.
const (
	EventJobStart = "job-start"
	EventJobEnd   = "job-end"
	EventFault    = "fault"
	EventDrain    = "drain"
	EventResume   = "resume"
	EventReclaim  = "reclaim"
	EventRequeue  = "requeue"
	EventNote     = "note"
)

// Run is the normalised result tree of one conformance run. It is plain
// data: build it, Validate it, hand it to the writers. Writers never modify
// it.
type Run struct {
	ID            string    `json:"id"`
	Target        string    `json:"target"`        // e.g. "sim", "lab:nightly.yaml", "cluster:ctl01:6817"
	Lab           string    `json:"lab,omitempty"` // the lab's name when the target is a lab
	Started       time.Time `json:"started"`
	Finished      time.Time `json:"finished"`
	ParityVersion string    `json:"parityVersion"`
	// SuiteVersion names the suite's set of specs and what they assert,
	// which certificates record; empty for runs that predate it.
	SuiteVersion string `json:"suiteVersion,omitempty"`
	Host         string `json:"host"`

	Vendors  []Vendor     `json:"vendors"`
	Specs    []SpecResult `json:"specs"`
	Timeline []Event      `json:"timeline,omitempty"`
	Series   []GPUSeries  `json:"series,omitempty"`
}

// Vendor describes one vendor the suite ran against. Order matters: it is
// the column order of every matrix.
type Vendor struct {
	Name          string `json:"name"`
	Driver        string `json:"driver,omitempty"` // driver adapter name
	DriverVersion string `json:"driverVersion,omitempty"`
	Devices       int    `json:"devices"`
	Model         string `json:"model,omitempty"` // GRES type of its GPUs, e.g. "h100"
}

// SpecResult is one spec's outcome for one vendor. Cross-vendor results
// (parity) leave Vendor empty.
type SpecResult struct {
	ID     string `json:"id"` // stable across runs and vendors, e.g. "isolation/visible-devices"
	Area   string `json:"area"`
	Name   string `json:"name"`
	Vendor string `json:"vendor,omitempty"`
	Status Status `json:"status"`
	// Reason says why the spec did not pass: required for skipped results
	// (nothing is skipped silently), a one-line summary for failures.
	Reason   string        `json:"reason,omitempty"`
	Duration time.Duration `json:"durationNs"`
	Evidence []Evidence    `json:"evidence,omitempty"`
	// Observations are the normalised facts the spec saw (e.g. visible=0,1),
	// compared across vendors by CompareVendors.
	Observations map[string]string `json:"observations,omitempty"`
}

// Evidence is one piece of proof attached to a result: a log excerpt, the
// environment a job saw, a command and its output. Text is shown verbatim;
// Data holds structured key/value facts.
type Evidence struct {
	Kind string            `json:"kind"` // e.g. "log", "env", "command", "parity"
	Text string            `json:"text,omitempty"`
	Data map[string]string `json:"data,omitempty"`
}

// Event is one thing that happened in the lab during the run. Job starts
// and ends with the same Job are drawn as one bar.
type Event struct {
	Time time.Time `json:"time"`
	Node string    `json:"node,omitempty"` // empty: lab-wide
	GPU  string    `json:"gpu,omitempty"`
	Job  string    `json:"job,omitempty"`
	Kind string    `json:"kind"`
	Text string    `json:"text,omitempty"`
}

// GPUSeries is the telemetry of one GPU over the run.
type GPUSeries struct {
	Node    string      `json:"node"`
	GPU     string      `json:"gpu"` // local index or UUID, as the run labels it
	Vendor  string      `json:"vendor,omitempty"`
	Model   string      `json:"model,omitempty"`
	Samples []GPUSample `json:"samples"`
}

// GPUSample is one reading. Fields named in Missing were not measured and
// are drawn as gaps, never as zero.
type GPUSample struct {
	Time           time.Time `json:"time"`
	UtilizationPct float64   `json:"utilizationPct"`
	TemperatureC   float64   `json:"temperatureC"`
	Health         string    `json:"health"` // "healthy", "suspect", "failed", "drained", "unknown"
	Missing        []string  `json:"missing,omitempty"`
}

// Names used in GPUSample.Missing.
const (
	FieldUtilization = "utilization"
	FieldTemperature = "temperature"
)

func (s GPUSample) missing(field string) bool {
	for _, m := range s.Missing {
		if m == field {
			return true
		}
	}
	return false
}

// Validate checks the tree is complete enough to report honestly: every
// result names its spec, area and a known status, every skip carries its
// reason, vendors are known and no (spec, vendor) pair appears twice.
func (r *Run) Validate() error {
	if r.ID == "" {
		return fmt.Errorf("%w: run id is empty", ErrInvalid)
	}
	if !r.Started.IsZero() && !r.Finished.IsZero() && r.Finished.Before(r.Started) {
		return fmt.Errorf("%w: finished %s is before started %s", ErrInvalid,
			r.Finished.Format(time.RFC3339), r.Started.Format(time.RFC3339))
	}
	vendors := make(map[string]bool, len(r.Vendors))
	for i, v := range r.Vendors {
		if v.Name == "" {
			return fmt.Errorf("%w: vendors[%d]: name is empty", ErrInvalid, i)
		}
		if vendors[v.Name] {
			return fmt.Errorf("%w: vendors[%d]: duplicate vendor %q", ErrInvalid, i, v.Name)
		}
		if v.Devices < 0 {
			return fmt.Errorf("%w: vendor %q: devices %d is negative", ErrInvalid, v.Name, v.Devices)
		}
		vendors[v.Name] = true
	}
	seen := make(map[Key]bool, len(r.Specs))
	for i, s := range r.Specs {
		if err := s.validate(vendors); err != nil {
			return fmt.Errorf("%w: specs[%d]: %w", ErrInvalid, i, err)
		}
		k := s.Key()
		if seen[k] {
			return fmt.Errorf("%w: specs[%d]: duplicate result for spec %q vendor %q", ErrInvalid, i, s.ID, s.Vendor)
		}
		seen[k] = true
	}
	for i, e := range r.Timeline {
		if e.Kind == "" {
			return fmt.Errorf("%w: timeline[%d]: kind is empty", ErrInvalid, i)
		}
		if e.Time.IsZero() {
			return fmt.Errorf("%w: timeline[%d]: time is zero", ErrInvalid, i)
		}
	}
	for i, s := range r.Series {
		if s.Node == "" || s.GPU == "" {
			return fmt.Errorf("%w: series[%d]: node %q and gpu %q must both be set", ErrInvalid, i, s.Node, s.GPU)
		}
	}
	return nil
}

func (s SpecResult) validate(vendors map[string]bool) error {
	switch {
	case s.ID == "":
		return errors.New("id is empty")
	case s.Area == "":
		return fmt.Errorf("spec %q: area is empty", s.ID)
	case !s.Status.valid():
		return fmt.Errorf("spec %q: status %q is not one of passed, failed, skipped, error", s.ID, s.Status)
	case s.Status == StatusSkipped && s.Reason == "":
		return fmt.Errorf("spec %q vendor %q: skipped without a reason", s.ID, s.Vendor)
	case s.Duration < 0:
		return fmt.Errorf("spec %q: duration %s is negative", s.ID, s.Duration)
	case s.Vendor == "" && s.Area != AreaParity:
		return fmt.Errorf("spec %q: vendor is empty (only parity results are cross-vendor)", s.ID)
	case s.Vendor != "" && !vendors[s.Vendor]:
		return fmt.Errorf("spec %q: vendor %q is not among the run's vendors", s.ID, s.Vendor)
	}
	return nil
}

// Key identifies a result within a run and across runs.
type Key struct {
	ID     string
	Vendor string // empty for cross-vendor results
}

// Key returns the result's identity.
func (s SpecResult) Key() Key { return Key{ID: s.ID, Vendor: s.Vendor} }

// CrossVendor reports whether the result compares vendors rather than
// belonging to one.
func (s SpecResult) CrossVendor() bool { return s.Vendor == "" }

// ParityID is the ID of the parity result that compares spec id across
// vendors.
func ParityID(id string) string { return "parity/" + id }
