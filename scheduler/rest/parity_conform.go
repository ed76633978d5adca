package rest

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/parityhpc/parity/reports"
)

// serveConformanceLatest answers the newest conformance report kept in
// Backend.ReportsDir.
func serveConformanceLatest(h *Handler, c *call) (any, error) {
	dir := h.b.ReportsDir
	if dir == "" {
		return nil, status.Error(codes.Unimplemented, "conformance/latest: this controller was not told where conformance reports are kept: "+
			"start it with --reports-dir DIR (the directory parity conform writes with --out DIR or --history DIR)")
	}
	path, err := newestReport(dir)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, status.Errorf(codes.Internal, "conformance/latest: %v", err)
	}
	defer f.Close()
	run, err := reports.ReadJSON(f)
	if err != nil {
		return nil, status.Errorf(codes.Internal, "conformance/latest: %s: %v", path, err)
	}
	rel, err := filepath.Rel(dir, path)
	if err != nil {
		rel = filepath.Base(path)
	}
	return &conformanceResp{Report: toConformance(rel, run)}, nil
}

// newestReport is the report written last in dir: a history file
// (report-TIME.json), dir/report.json, or a run folder's report.json one
// level down (parity conform --out DIR/RUN).
func newestReport(dir string) (string, error) {
	var best string
	var bestTime time.Time
	consider := func(path string) {
		st, err := os.Stat(path)
		if err != nil || !st.Mode().IsRegular() {
			return
		}
		if best == "" || st.ModTime().After(bestTime) || st.ModTime().Equal(bestTime) && path > best {
			best, bestTime = path, st.ModTime()
		}
	}
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return "", status.Errorf(codes.NotFound, "conformance/latest: the reports directory %s does not exist (--reports-dir)", dir)
	}
	if err != nil {
		return "", status.Errorf(codes.Internal, "conformance/latest: read the reports directory: %v", err)
	}
	for _, e := range entries {
		name := e.Name()
		switch {
		case e.IsDir():
			consider(filepath.Join(dir, name, "report.json"))
		case name == "report.json", strings.HasPrefix(name, "report-") && strings.HasSuffix(name, ".json"):
			consider(filepath.Join(dir, name))
		}
	}
	if best == "" {
		return "", status.Errorf(codes.NotFound, "conformance/latest: no report.json in %s yet (run parity conform --out %s/RUN or --history %s)", dir, dir, dir)
	}
	return best, nil
}

func toConformance(file string, r *reports.Run) *conformanceReport {
	out := &conformanceReport{File: file, ID: r.ID, Target: r.Target, Lab: r.Lab, Started: num(r.Started.Unix()),
		Finished: num(r.Finished.Unix()), ParityVersion: r.ParityVersion, SuiteVersion: r.SuiteVersion,
		Vendors: []conformanceVendor{}, Matrix: []conformanceRow{}}
	for _, v := range r.Vendors {
		out.Vendors = append(out.Vendors, conformanceVendor{Name: v.Name, Driver: v.Driver, DriverVersion: v.DriverVersion, Devices: v.Devices, Model: v.Model})
	}
	vendor, parity := r.Count()
	out.Summary = conformanceSummary{Vendor: totals(vendor), Parity: totals(parity), Green: reports.Green(r)}
	rows := map[string]int{} // spec id: its row in out.Matrix
	row := func(id string, s reports.SpecResult) *conformanceRow {
		i, ok := rows[id]
		if !ok {
			i = len(out.Matrix)
			rows[id] = i
			out.Matrix = append(out.Matrix, conformanceRow{ID: id, Area: s.Area, Name: s.Name, Results: map[string]string{}})
		}
		return &out.Matrix[i]
	}
	// Per-vendor rows first, so a comparison lands on its spec's row.
	for _, s := range r.Specs {
		if !s.CrossVendor() {
			cr := row(s.ID, s)
			cr.Results[s.Vendor] = string(s.Status)
			addReason(cr, s.Vendor, s.Reason)
		}
	}
	for _, s := range r.Specs {
		if s.CrossVendor() {
			cr := row(strings.TrimPrefix(s.ID, "parity/"), s)
			cr.Parity = string(s.Status)
			addReason(cr, "parity", s.Reason)
		}
	}
	return out
}

func addReason(cr *conformanceRow, who, reason string) {
	if reason == "" {
		return
	}
	if cr.Reasons == nil {
		cr.Reasons = map[string]string{}
	}
	cr.Reasons[who] = reason
}

func totals(t reports.Totals) conformanceTotals {
	return conformanceTotals{Passed: t.Passed, Failed: t.Failed, Skipped: t.Skipped, Errors: t.Errors}
}
