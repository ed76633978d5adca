package reports

import (
	"encoding/xml"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"
)

// ParitySuite names the JUnit test suite holding cross-vendor results.
const ParitySuite = "parity"

type junitSuites struct {
	XMLName   xml.Name     `xml:"testsuites"`
	Name      string       `xml:"name,attr"`
	Tests     int          `xml:"tests,attr"`
	Failures  int          `xml:"failures,attr"`
	Errors    int          `xml:"errors,attr"`
	Skipped   int          `xml:"skipped,attr"`
	Time      string       `xml:"time,attr"`
	Timestamp string       `xml:"timestamp,attr,omitempty"`
	Suites    []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name       string          `xml:"name,attr"`
	Tests      int             `xml:"tests,attr"`
	Failures   int             `xml:"failures,attr"`
	Errors     int             `xml:"errors,attr"`
	Skipped    int             `xml:"skipped,attr"`
	Time       string          `xml:"time,attr"`
	Timestamp  string          `xml:"timestamp,attr,omitempty"`
	Hostname   string          `xml:"hostname,attr,omitempty"`
	Properties []junitProperty `xml:"properties>property,omitempty"`
	Cases      []junitCase     `xml:"testcase"`
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitCase struct {
	Name      string    `xml:"name,attr"`
	Classname string    `xml:"classname,attr"`
	Time      string    `xml:"time,attr"`
	Failure   *junitMsg `xml:"failure,omitempty"`
	Error     *junitMsg `xml:"error,omitempty"`
	Skipped   *junitMsg `xml:"skipped,omitempty"`
	SystemOut string    `xml:"system-out,omitempty"`
}

type junitMsg struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr,omitempty"`
	Body    string `xml:",chardata"`
}

// WriteJUnit writes the run as JUnit XML: one testsuite per vendor (in the
// run's vendor order) plus a "parity" suite for cross-vendor results, one
// testcase per result named by its spec ID, with failure, error or skipped
// elements carrying the reason and the evidence. Times are in seconds.
func WriteJUnit(w io.Writer, r *Run) error {
	if err := r.Validate(); err != nil {
		return err
	}
	doc := junitSuites{Name: "parity conformance " + r.ID, Timestamp: stamp(r.Started)}
	suites := map[string]*junitSuite{}
	names := slices.Clone(r.VendorNames())
	for _, v := range r.Vendors {
		suites[v.Name] = &junitSuite{Name: v.Name, Timestamp: stamp(r.Started), Hostname: r.Host, Properties: vendorProperties(r, v)}
	}
	var total time.Duration
	dur := map[string]time.Duration{}
	specs := slices.Clone(r.Specs)
	slices.SortStableFunc(specs, compareResults(r.vendorRank()))
	for _, s := range specs {
		name := s.Vendor
		if s.CrossVendor() {
			name = ParitySuite
			if suites[name] == nil {
				suites[name] = &junitSuite{Name: name, Timestamp: stamp(r.Started), Hostname: r.Host}
				names = append(names, name)
			}
		}
		suite := suites[name]
		suite.Cases = append(suite.Cases, junitCaseOf(s, name))
		suite.Tests++
		switch s.Status {
		case StatusFailed:
			suite.Failures++
		case StatusError:
			suite.Errors++
		case StatusSkipped:
			suite.Skipped++
		}
		dur[name] += s.Duration
		total += s.Duration
	}
	for _, n := range names {
		s := suites[n]
		s.Time = seconds(dur[n])
		doc.Tests += s.Tests
		doc.Failures += s.Failures
		doc.Errors += s.Errors
		doc.Skipped += s.Skipped
		doc.Suites = append(doc.Suites, *s)
	}
	doc.Time = seconds(total)
	if !r.Started.IsZero() && !r.Finished.IsZero() {
		doc.Time = seconds(r.Finished.Sub(r.Started))
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return fmt.Errorf("reports: write junit: %w", err)
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return fmt.Errorf("reports: write junit: %w", err)
	}
	if _, err := io.WriteString(w, "\n"); err != nil {
		return fmt.Errorf("reports: write junit: %w", err)
	}
	return nil
}

func vendorProperties(r *Run, v Vendor) []junitProperty {
	props := []junitProperty{
		{Name: "run", Value: r.ID},
		{Name: "target", Value: r.Target},
		{Name: "lab", Value: r.Lab},
		{Name: "parityVersion", Value: r.ParityVersion},
		{Name: "driver", Value: v.Driver},
		{Name: "driverVersion", Value: v.DriverVersion},
		{Name: "model", Value: v.Model},
		{Name: "devices", Value: fmt.Sprint(v.Devices)},
	}
	return slices.DeleteFunc(props, func(p junitProperty) bool { return p.Value == "" })
}

func junitCaseOf(s SpecResult, suite string) junitCase {
	c := junitCase{Name: s.ID, Classname: suite + "." + s.Area, Time: seconds(s.Duration)}
	body := evidenceText(s)
	msg := s.Reason
	if msg == "" && len(s.Evidence) > 0 {
		msg = firstLine(s.Evidence[0].Text)
	}
	switch s.Status {
	case StatusFailed:
		c.Failure = &junitMsg{Message: cmpOr(msg, "failed"), Type: "failed", Body: body}
	case StatusError:
		c.Error = &junitMsg{Message: cmpOr(msg, "error"), Type: "error", Body: body}
	case StatusSkipped:
		c.Skipped = &junitMsg{Message: s.Reason}
	}
	if out := s.Name + "\n" + observationText(s.Observations); s.Status == StatusPassed || s.Status == StatusSkipped {
		c.SystemOut = strings.TrimRight(out+body, "\n")
	} else {
		c.SystemOut = strings.TrimRight(out, "\n")
	}
	return c
}

// evidenceText renders evidence as plain text: one "[kind]" header per
// piece, its text verbatim, then its data as sorted key=value lines.
func evidenceText(s SpecResult) string {
	var b strings.Builder
	for _, e := range s.Evidence {
		fmt.Fprintf(&b, "[%s]\n", e.Kind)
		if e.Text != "" {
			b.WriteString(strings.TrimRight(e.Text, "\n"))
			b.WriteString("\n")
		}
		for _, k := range slices.Sorted(maps.Keys(e.Data)) {
			fmt.Fprintf(&b, "  %s=%s\n", k, e.Data[k])
		}
	}
	return b.String()
}

func observationText(obs map[string]string) string {
	if len(obs) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("observations:\n")
	for _, k := range slices.Sorted(maps.Keys(obs)) {
		fmt.Fprintf(&b, "  %s=%s\n", k, obs[k])
	}
	return b.String()
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func stamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

func seconds(d time.Duration) string { return fmt.Sprintf("%.3f", d.Seconds()) }
