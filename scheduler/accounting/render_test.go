package accounting

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestParseFormat(t *testing.T) {
	cols, err := ParseFormat("JobID,jobname%30,State%-12,AllocTRES%40")
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		name  string
		width int
	}{{"JobID", -12}, {"JobName", 30}, {"State", -12}, {"AllocTRES", 40}}
	for i, w := range want {
		if cols[i].Header() != w.name || cols[i].Width != w.width {
			t.Errorf("column %d = %s/%d, want %s/%d", i, cols[i].Header(), cols[i].Width, w.name, w.width)
		}
	}
	for _, spec := range []string{DefaultFormat, BriefFormat, LongFormat} {
		if _, err := ParseFormat(spec); err != nil {
			t.Errorf("built-in format %q: %v", spec, err)
		}
	}
}

func TestParseFormatErrorsNameTheField(t *testing.T) {
	tests := []struct{ spec, mention string }{
		{"JobID,Bogus", `"Bogus"`},
		{"JobID,,State", "empty field"},
		{"JobID%x", `"JobID"`},
		{"State%0", `"0"`},
		{"State%", `"State"`},
		{"%12", "empty field"},
	}
	for _, tc := range tests {
		_, err := ParseFormat(tc.spec)
		if !errors.Is(err, ErrBadFormat) || !strings.Contains(err.Error(), tc.mention) {
			t.Errorf("ParseFormat(%q) err = %v, want ErrBadFormat mentioning %s", tc.spec, err, tc.mention)
		}
	}
}

func TestCell(t *testing.T) {
	tests := []struct {
		in    string
		width int
		want  string
	}{
		{"gpu", 6, "   gpu"},
		{"gpu", -6, "gpu   "},
		{"verylongname", 10, "verylongn+"},
		{"verylongname", -10, "verylongn+"},
		{"exactly10!", 10, "exactly10!"},
	}
	for _, tc := range tests {
		if got := Cell(tc.in, tc.width); got != tc.want {
			t.Errorf("Cell(%q, %d) = %q, want %q", tc.in, tc.width, got, tc.want)
		}
	}
}

func TestRenderTableDefaultColumns(t *testing.T) {
	recs := sampleRecords(t)
	cols, _ := ParseFormat(DefaultFormat)
	var buf bytes.Buffer
	if err := RenderTable(&buf, recs, cols, View{Now: testNow}, TableOptions{}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if len(lines) != 2+len(recs) {
		t.Fatalf("got %d lines, want header, rule and %d rows:\n%s", len(lines), len(recs), buf.String())
	}
	if got := strings.Fields(lines[0]); strings.Join(got, ",") != DefaultFormat {
		t.Errorf("header = %q", lines[0])
	}
	if lines[1] != "------------ ---------- ---------- ---------- ---------- ---------- --------" {
		t.Errorf("rule = %q", lines[1])
	}
	want := [][]string{
		{"100", "train", "gpu", "physics", "16", "COMPLETED", "0:0"},
		{"100.batch", "batch", "physics", "8", "COMPLETED", "0:0"}, // steps leave Partition empty
		{"100.extern", "extern", "physics", "8", "COMPLETED", "0:0"},
		{"200_5", "sweep", "gpu", "chem", "4", "CANCELLED+", "0:15"},
		{"300", "a-very-lo+", "mi300", "physics", "8", "RUNNING", "0:0"},
	}
	for i, w := range want {
		if got := strings.Fields(lines[2+i]); strings.Join(got, "|") != strings.Join(w, "|") {
			t.Errorf("row %d = %q, want fields %v", i, lines[2+i], w)
		}
	}
	// JobID is left aligned, the rest right aligned, at the default widths.
	if !strings.HasPrefix(lines[2], "100          ") || !strings.HasSuffix(lines[2], "      0:0") {
		t.Errorf("alignment of %q", lines[2])
	}
}

func TestRenderParsable(t *testing.T) {
	recs := sampleRecords(t)
	cols, _ := ParseFormat("JobID,JobIDRaw,User,State,Elapsed,AllocTRES,Start,End,GPUUUIDs")
	var buf bytes.Buffer
	if err := RenderTable(&buf, recs[3:], cols, View{Now: testNow}, TableOptions{Parsable: true}); err != nil {
		t.Fatal(err)
	}
	want := "JobID|JobIDRaw|User|State|Elapsed|AllocTRES|Start|End|GPUUUIDs\n" +
		"200_5|205|bob|CANCELLED by bob|00:15:00|billing=4,cpu=4,gres/gpu=1,mem=16G,node=1|2024-03-13T09:30:00|2024-03-13T09:45:00|\n" +
		"300|300|alice|RUNNING|01:00:05|billing=8,cpu=8,gres/gpu=1,gres/gpu:mi300x=1,mem=8G,node=1|2024-03-13T14:04:00|Unknown|\n"
	if buf.String() != want {
		t.Errorf("--parsable2 output:\n%s\nwant:\n%s", buf.String(), want)
	}
	// Who cancelled, by uid where the host knows the user, as the
	// anchor's sacct prints "CANCELLED by 0" for root.
	buf.Reset()
	uids := View{Now: testNow, UID: func(u string) (string, bool) { return map[string]string{"bob": "1001"}[u], u == "bob" }}
	if err := RenderTable(&buf, recs[3:4], cols[3:4], uids, TableOptions{Parsable: true, NoHeader: true}); err != nil {
		t.Fatal(err)
	}
	if buf.String() != "CANCELLED by 1001\n" {
		t.Errorf("State with a known user = %q, want CANCELLED by 1001", buf.String())
	}
	buf.Reset()
	if err := RenderTable(&buf, recs[:1], cols[:2], View{Now: testNow}, TableOptions{Parsable: true, Trailing: true, NoHeader: true, Delimiter: ";"}); err != nil {
		t.Fatal(err)
	}
	if buf.String() != "100;100;\n" {
		t.Errorf("--parsable --noheader --delimiter=; = %q", buf.String())
	}
}

func TestFieldValues(t *testing.T) {
	recs := sampleRecords(t)
	v := View{Now: testNow}
	tests := []struct {
		field string
		rec   int
		want  string
	}{
		{"Elapsed", 0, "02:00:00"},
		{"ElapsedRaw", 0, "7200"},
		{"CPUTime", 0, "1-08:00:00"}, // 16 CPUs × 2 h
		{"CPUTimeRAW", 0, "115200"},
		{"TotalCPU", 0, "20:00:00"},
		{"Timelimit", 0, "04:00:00"},
		{"Timelimit", 1, ""},
		{"Timelimit", 3, "UNLIMITED"},
		{"ReqMem", 0, "64G"},
		{"MaxRSS", 0, "31457280K"},
		{"NodeList", 0, "gpu[01-02]"},
		{"NNodes", 0, "2"},
		{"AllocGPUS", 4, "1"},
		{"User", 1, ""},
		{"Restarts", 0, "0"},
		{"TRESUsageInMax", 0, "cpu=72000,gres/gpumem=70G,gres/gpuutil=99,mem=30G"},
		{"TRESUsageInAve", 0, "cpu=72000,gres/gpumem=70G,gres/gpuutil=71.5,mem=30G"},
		{"GPUUUIDs", 0, "GPU-aaaa,GPU-bbbb,GPU-cccc,GPU-dddd"},
		{"StartDecision", 0, "plan-17/start"},
		{"Eligible", 3, "Unknown"},
		{"Submit", 3, "2024-03-13T09:00:00"},
	}
	named := recs[1]
	named.Name = "train" // a batch line is called batch whatever the job's name
	numbered := recs[1]
	numbered.Step, numbered.Name = "3", "python"
	recs = append(recs, named, numbered)
	tests = append(tests, []struct {
		field string
		rec   int
		want  string
	}{{"JobName", 5, "batch"}, {"JobName", 6, "python"}, {"JobID", 6, "100.3"}}...)
	for _, tc := range tests {
		f, ok := LookupField(tc.field)
		if !ok {
			t.Fatalf("no field %s", tc.field)
		}
		if got := f.Value(&recs[tc.rec], v); got != tc.want {
			t.Errorf("%s of record %d = %q, want %q", tc.field, tc.rec, got, tc.want)
		}
	}
}

// MaxRSS reads as sacct prints it, in KiB whatever the size.
func TestMaxRSSInKiB(t *testing.T) {
	f, ok := LookupField("MaxRSS")
	if !ok {
		t.Fatal("no field MaxRSS")
	}
	for mib, want := range map[float64]string{0: "", 0.52734375: "540K", 1000.5: "1024512K"} {
		r := JobRecord{Usage: JobUsage{MaxRSSMiB: mib}}
		if got := f.Value(&r, View{Now: testNow}); got != want {
			t.Errorf("MaxRSS of %v MiB = %q, want %q", mib, got, want)
		}
	}
}

func TestWriteJSONNestsSteps(t *testing.T) {
	recs := sampleRecords(t)
	var buf bytes.Buffer
	if err := WriteJSON(&buf, recs, View{Now: testNow}, "test"); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Jobs []struct {
			JobID       uint64 `json:"job_id"`
			ArrayJobID  uint64 `json:"array_job_id"`
			State       []string
			User        string
			CancelledBy string `json:"cancelled_by"`
			TRES        map[string][]struct {
				Type, Name string
				Count      float64
			}
			GPUUUIDs []string `json:"gpu_uuids"`
			Steps    []struct {
				Step struct{ ID, Name string }
			}
			Time struct {
				End   int64
				Limit struct {
					Set, Infinite bool
					Number        float64
				}
			}
		}
		Errors []any
	}
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatalf("invalid JSON: %v\n%s", err, buf.String())
	}
	if len(doc.Jobs) != 3 || doc.Errors == nil {
		t.Fatalf("got %d jobs (errors %v), want 3 jobs and an empty errors list", len(doc.Jobs), doc.Errors)
	}
	j := doc.Jobs[0]
	if j.JobID != 100 || len(j.Steps) != 2 || j.Steps[0].Step.ID != "100.batch" || j.Steps[1].Step.Name != "extern" {
		t.Errorf("job 100 = %+v", j)
	}
	if len(j.GPUUUIDs) != 4 || j.Time.Limit.Number != 240 || j.Time.Limit.Infinite {
		t.Errorf("job 100 GPUs %v, limit %+v", j.GPUUUIDs, j.Time.Limit)
	}
	found := false
	for _, tr := range j.TRES["allocated"] {
		if tr.Type == "gres" && tr.Name == "gpu:h100" && tr.Count == 4 {
			found = true
		}
	}
	if !found {
		t.Errorf("allocated TRES %+v lacks gres gpu:h100=4", j.TRES["allocated"])
	}
	if a := doc.Jobs[1]; a.ArrayJobID != 200 || a.CancelledBy != "bob" || a.State[0] != "CANCELLED" {
		t.Errorf("array task = %+v", a)
	}
	if r := doc.Jobs[2]; r.Time.End != 0 || !r.Time.Limit.Infinite {
		t.Errorf("running job time = %+v", r.Time)
	}
}
