package trace

import (
	"errors"
	"strings"
	"testing"
)

const swfHeader = `; Version: 2.2
; Computer: test
; Information: http://example.org/
;              http://example.org/more
; UnixStartTime: 843480031
; MaxNodes: 64
; MaxProcs: 128
; MaxRuntime: 86400
;
`

func TestReadSWFHeader(t *testing.T) {
	tr, err := ReadSWF(strings.NewReader(swfHeader), Options{})
	if err != nil {
		t.Fatal(err)
	}
	h := tr.Header
	if h.MaxProcs != 128 || h.MaxNodes != 64 || h.UnixStartTime != 843480031 || h.MaxRuntime != 86400 {
		t.Errorf("header = %+v", h)
	}
	var keys []string
	for _, c := range h.Comments {
		keys = append(keys, c.Key)
	}
	if got, want := strings.Join(keys, ","), "Version,Computer,Information,UnixStartTime,MaxNodes,MaxProcs,MaxRuntime"; got != want {
		t.Errorf("comment keys = %s, want %s (continuation lines are not keys)", got, want)
	}
	if tr.Records != 0 || len(tr.Jobs) != 0 {
		t.Errorf("a header-only file has %d records, %d jobs", tr.Records, len(tr.Jobs))
	}
}

func TestReadSWFRecords(t *testing.T) {
	tests := []struct {
		name    string
		line    string
		want    *Job // nil: not replayed
		skipped Skipped
	}{
		{name: "completed", line: "7 100 5 60 4 -1 -1 4 120 -1 1 3 2 -1 -1 -1 -1 -1",
			want: &Job{ID: 7, Submit: 100, Runtime: 60, Requested: 120, Procs: 4, RequestedProcs: 4, User: "u3", Account: "g2", Status: 1, RecordedWait: 5}},
		{name: "allocated unknown uses requested", line: "1 0 -1 60 -1 -1 -1 8 -1 -1 0 -1 -1 -1 -1 -1 -1 -1",
			want: &Job{ID: 1, Runtime: 60, Procs: 8, RequestedProcs: 8, User: "unknown", Status: 0, RecordedWait: -1}},
		{name: "fractional times round", line: "2 10.6 0 59.5 1 -1 -1 1 30.2 -1 1 1 1 -1 -1 -1 -1 -1",
			want: &Job{ID: 2, Submit: 11, Runtime: 60, Requested: 30, Procs: 1, RequestedProcs: 1, User: "u1", Account: "g1", Status: 1, RecordedWait: 0}},
		{name: "cancelled after it ran is replayed", line: "3 0 10 30 2 -1 -1 2 60 -1 5 1 1 -1 -1 -1 -1 -1",
			want: &Job{ID: 3, Runtime: 30, Requested: 60, Procs: 2, RequestedProcs: 2, User: "u1", Account: "g1", Status: 5, RecordedWait: 10}},
		{name: "allocated and requested differ", line: "10 0 0 60 16 -1 -1 12 120 -1 1 1 1 -1 -1 -1 -1 -1",
			want: &Job{ID: 10, Runtime: 60, Requested: 120, Procs: 16, RequestedProcs: 12, User: "u1", Account: "g1", Status: 1, RecordedWait: 0}},
		{name: "requested unknown", line: "11 0 0 60 16 -1 -1 -1 120 -1 1 1 1 -1 -1 -1 -1 -1",
			want: &Job{ID: 11, Runtime: 60, Requested: 120, Procs: 16, User: "u1", Account: "g1", Status: 1, RecordedWait: 0}},
		{name: "cancelled before start", line: "4 0 -1 -1 -1 -1 -1 2 60 -1 5 1 1 -1 -1 -1 -1 -1", skipped: Skipped{Cancelled: 1}},
		{name: "cancelled with zero runtime", line: "4 0 -1 0 2 -1 -1 2 60 -1 5 1 1 -1 -1 -1 -1 -1", skipped: Skipped{Cancelled: 1}},
		{name: "partial continued", line: "5 0 0 30 2 -1 -1 2 60 -1 2 1 1 -1 -1 -1 -1 -1", skipped: Skipped{Partial: 1}},
		{name: "partial last completed", line: "5 0 0 30 2 -1 -1 2 60 -1 3 1 1 -1 -1 -1 -1 -1", skipped: Skipped{Partial: 1}},
		{name: "partial last failed", line: "5 0 0 30 2 -1 -1 2 60 -1 4 1 1 -1 -1 -1 -1 -1", skipped: Skipped{Partial: 1}},
		{name: "no runtime", line: "6 0 0 0 2 -1 -1 2 60 -1 1 1 1 -1 -1 -1 -1 -1", skipped: Skipped{NoRuntime: 1}},
		{name: "unknown runtime", line: "6 0 0 -1 2 -1 -1 2 60 -1 1 1 1 -1 -1 -1 -1 -1", skipped: Skipped{NoRuntime: 1}},
		{name: "no processors", line: "8 0 0 10 -1 -1 -1 -1 60 -1 1 1 1 -1 -1 -1 -1 -1", skipped: Skipped{NoProcs: 1}},
		{name: "tabs and CRLF", line: "9\t0\t0\t10\t1\t-1\t-1\t1\t60\t-1\t1\t1\t1\t-1\t-1\t-1\t-1\t-1\r",
			want: &Job{ID: 9, Runtime: 10, Requested: 60, Procs: 1, RequestedProcs: 1, User: "u1", Account: "g1", Status: 1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tr, err := ReadSWF(strings.NewReader(swfHeader+tc.line+"\n"), Options{Strict: true})
			if err != nil {
				t.Fatal(err)
			}
			if tr.Records != 1 {
				t.Errorf("Records = %d, want 1", tr.Records)
			}
			if tr.Skipped != tc.skipped {
				t.Errorf("Skipped = %+v, want %+v", tr.Skipped, tc.skipped)
			}
			if tc.want == nil {
				if len(tr.Jobs) != 0 {
					t.Errorf("replayed %+v, want it skipped", tr.Jobs[0])
				}
				return
			}
			if len(tr.Jobs) != 1 {
				t.Fatalf("got %d jobs, want 1", len(tr.Jobs))
			}
			want := *tc.want
			want.Line = strings.Count(swfHeader, "\n") + 1
			if tr.Jobs[0] != want {
				t.Errorf("job = %+v\nwant %+v", tr.Jobs[0], want)
			}
		})
	}
}

func TestReadSWFCorrupt(t *testing.T) {
	tests := []struct {
		name, line, field string
	}{
		{"too few fields", "1 0 0 10 1 -1 -1 1 60 -1 1 1 1 -1 -1 -1 -1", ""},
		{"too many fields", "1 0 0 10 1 -1 -1 1 60 -1 1 1 1 -1 -1 -1 -1 -1 9", ""},
		{"not a number", "1 0 0 ten 1 -1 -1 1 60 -1 1 1 1 -1 -1 -1 -1 -1", "run time (4)"},
		{"NaN", "1 0 0 NaN 1 -1 -1 1 60 -1 1 1 1 -1 -1 -1 -1 -1", "run time (4)"},
		{"infinite", "1 0 0 10 1 -1 -1 1 +Inf -1 1 1 1 -1 -1 -1 -1 -1", "requested time (9)"},
		{"negative submit", "1 -5 0 10 1 -1 -1 1 60 -1 1 1 1 -1 -1 -1 -1 -1", "submit time (2)"},
		{"runtime below -1", "1 0 0 -7 1 -1 -1 1 60 -1 1 1 1 -1 -1 -1 -1 -1", "run time (4)"},
		{"fractional processors", "1 0 0 10 1.5 -1 -1 1 60 -1 1 1 1 -1 -1 -1 -1 -1", "allocated processors (5)"},
		{"huge processors", "1 0 0 10 99999999999 -1 -1 1 60 -1 1 1 1 -1 -1 -1 -1 -1", "allocated processors (5)"},
		{"unknown status", "1 0 0 10 1 -1 -1 1 60 -1 7 1 1 -1 -1 -1 -1 -1", "status (11)"},
		{"negative user", "1 0 0 10 1 -1 -1 1 60 -1 1 -3 1 -1 -1 -1 -1 -1", "user id (12)"},
		{"fractional job number", "1.5 0 0 10 1 -1 -1 1 60 -1 1 1 1 -1 -1 -1 -1 -1", "job number (1)"},
	}
	good := "2 0 0 10 1 -1 -1 1 60 -1 1 1 1 -1 -1 -1 -1 -1\n"
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := good + tc.line + "\n" + good
			tr, err := ReadSWF(strings.NewReader(in), Options{})
			if err != nil {
				t.Fatalf("lenient read failed: %v", err)
			}
			if tr.BadLines != 1 || len(tr.Errors) != 1 || len(tr.Jobs) != 2 || tr.Records != 3 {
				t.Fatalf("bad=%d errors=%v jobs=%d records=%d, want 1 bad line on line 2 and 2 jobs", tr.BadLines, tr.Errors, len(tr.Jobs), tr.Records)
			}
			e := tr.Errors[0]
			if e.Line != 2 || e.Field != tc.field {
				t.Errorf("error %v: line %d field %q, want line 2 field %q", e, e.Line, e.Field, tc.field)
			}
			_, err = ReadSWF(strings.NewReader(in), Options{Strict: true})
			var le *LineError
			if !errors.Is(err, ErrSyntax) || !errors.As(err, &le) || le.Line != 2 {
				t.Errorf("strict read error = %v, want a LineError on line 2 wrapping ErrSyntax", err)
			}
		})
	}
}

func TestReadSWFBadHeaderValue(t *testing.T) {
	in := "; MaxProcs: lots\n1 0 0 10 1 -1 -1 1 60 -1 1 1 1 -1 -1 -1 -1 -1\n"
	tr, err := ReadSWF(strings.NewReader(in), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if tr.BadLines != 1 || tr.Errors[0].Field != "header MaxProcs" || tr.Header.MaxProcs != 0 || len(tr.Jobs) != 1 {
		t.Errorf("bad=%d errors=%v maxprocs=%d jobs=%d", tr.BadLines, tr.Errors, tr.Header.MaxProcs, len(tr.Jobs))
	}
	if _, err := ReadSWF(strings.NewReader(in), Options{Strict: true}); !errors.Is(err, ErrSyntax) {
		t.Errorf("strict: err = %v, want ErrSyntax", err)
	}
}

func TestReadSWFSortsAndKeepsErrors(t *testing.T) {
	var b strings.Builder
	b.WriteString("1 50 0 10 1 -1 -1 1 60 -1 1 1 1 -1 -1 -1 -1 -1\n")
	b.WriteString("2 20 0 10 1 -1 -1 1 60 -1 1 1 1 -1 -1 -1 -1 -1\n")
	b.WriteString("3 20 0 10 1 -1 -1 1 60 -1 1 1 1 -1 -1 -1 -1 -1\n")
	for i := 0; i < 5; i++ {
		b.WriteString("garbage\n")
	}
	tr, err := ReadSWF(strings.NewReader(b.String()), Options{KeepErrors: 2})
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for _, j := range tr.Jobs {
		ids = append(ids, j.ID)
	}
	if len(ids) != 3 || ids[0] != 2 || ids[1] != 3 || ids[2] != 1 {
		t.Errorf("order = %v, want [2 3 1] (by submit, ties in file order)", ids)
	}
	if tr.BadLines != 5 || len(tr.Errors) != 2 || tr.Errors[0].Line != 4 || tr.Errors[1].Line != 5 {
		t.Errorf("bad=%d kept=%v, want 5 counted and lines 4, 5 kept", tr.BadLines, tr.Errors)
	}
}

func TestReadSWFLineTooLong(t *testing.T) {
	in := "1 " + strings.Repeat("9", maxLine+10) + "\n"
	if _, err := ReadSWF(strings.NewReader(in), Options{}); err == nil {
		t.Error("a line longer than the limit read without error")
	}
}
