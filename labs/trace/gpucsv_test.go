package trace

import (
	"errors"
	"strings"
	"testing"
)

func TestReadGPUCSVPhilly(t *testing.T) {
	// Philly's columns, unsorted rows and a trailing blank line, as in the file.
	in := "timestamp,duration,num_gpus,gpu_time,cluster\n" +
		"2017-10-09 07:01:55,66.0,1,66.0,11cb48\n" +
		"2017-10-09 06:13:03,2951.0,8,23608.0,6214e9\n" +
		"2017-10-09 07:01:55,10.4,2,20.8,6214e9\n" +
		"\n"
	tr, err := ReadGPUCSV(strings.NewReader(in), Options{Strict: true})
	if err != nil {
		t.Fatal(err)
	}
	want := []Job{
		{ID: 2, Line: 3, Submit: 0, Runtime: 2951, Procs: 8, User: "6214e9", Account: "6214e9", Status: -1, RecordedWait: -1},
		{ID: 1, Line: 2, Submit: 2932, Runtime: 66, Procs: 1, User: "11cb48", Account: "11cb48", Status: -1, RecordedWait: -1},
		{ID: 3, Line: 4, Submit: 2932, Runtime: 10, Procs: 2, User: "6214e9", Account: "6214e9", Status: -1, RecordedWait: -1},
	}
	if len(tr.Jobs) != len(want) {
		t.Fatalf("got %d jobs, want %d", len(tr.Jobs), len(want))
	}
	for i := range want {
		if tr.Jobs[i] != want[i] {
			t.Errorf("job %d = %+v\nwant %+v", i, tr.Jobs[i], want[i])
		}
	}
	if tr.Header.UnixStartTime != 1507529583 { // 2017-10-09 06:13:03 UTC
		t.Errorf("UnixStartTime = %d", tr.Header.UnixStartTime)
	}
	if tr.Format != FormatGPUCSV || tr.Records != 3 {
		t.Errorf("format %q records %d", tr.Format, tr.Records)
	}
}

func TestReadGPUCSVAllColumns(t *testing.T) {
	in := "JobID,User,VC,Submit,Runtime,GPUs,Nodes,Time_Limit,extra\n" +
		`17,"smith, j",vc1,100,50,16,2,3600,x` + "\n" +
		"18,,vc2,130,40,1,,-1,y\n" +
		"19,,,130,40,1,,,z\n"
	tr, err := ReadGPUCSV(strings.NewReader(in), Options{Strict: true})
	if err != nil {
		t.Fatal(err)
	}
	want := []Job{
		{ID: 17, Line: 2, Submit: 0, Runtime: 50, Procs: 16, Nodes: 2, Requested: 3600, User: "smith, j", Account: "vc1", Status: -1, RecordedWait: -1},
		{ID: 18, Line: 3, Submit: 30, Runtime: 40, Procs: 1, User: "vc2", Account: "vc2", Status: -1, RecordedWait: -1},
		{ID: 19, Line: 4, Submit: 30, Runtime: 40, Procs: 1, User: "unknown", Status: -1, RecordedWait: -1},
	}
	for i := range want {
		if i >= len(tr.Jobs) || tr.Jobs[i] != want[i] {
			t.Errorf("jobs = %+v\nwant %+v", tr.Jobs, want)
			break
		}
	}
	if tr.Header.UnixStartTime != 100 {
		t.Errorf("UnixStartTime = %d, want the earliest submit 100", tr.Header.UnixStartTime)
	}
}

func TestReadGPUCSVSkipsAndCorrupt(t *testing.T) {
	head := "submit,runtime,gpus\n"
	tests := []struct {
		name, row, field string
		skipped          Skipped
	}{
		{name: "zero runtime", row: "5,0,1", skipped: Skipped{NoRuntime: 1}},
		{name: "zero gpus (a CPU job)", row: "5,10,0", skipped: Skipped{NoProcs: 1}},
		{name: "field count", row: "5,10", field: "-"},
		{name: "bad submit", row: "yesterday,10,1", field: "submit"},
		{name: "negative submit", row: "-4,10,1", field: "submit"},
		{name: "bad runtime", row: "5,ten,1", field: "runtime"},
		{name: "fractional gpus", row: "5,10,1.5", field: "gpus"},
		{name: "bad quote", row: `5,10,"1`, field: "-"},
		{name: "quote mid-field", row: `5,1"0,1`, field: "-"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := head + "1,10,1\n" + tc.row + "\n2,10,1\n"
			tr, err := ReadGPUCSV(strings.NewReader(in), Options{})
			if err != nil {
				t.Fatal(err)
			}
			if tr.Skipped != tc.skipped || len(tr.Jobs) != 2 || tr.Records != 3 {
				t.Errorf("skipped %+v jobs %d records %d", tr.Skipped, len(tr.Jobs), tr.Records)
			}
			_, serr := ReadGPUCSV(strings.NewReader(in), Options{Strict: true})
			if tc.field == "" {
				if tr.BadLines != 0 || serr != nil {
					t.Errorf("bad=%d strict err=%v, want none", tr.BadLines, serr)
				}
				return
			}
			if tr.BadLines != 1 || tr.Errors[0].Line != 3 {
				t.Fatalf("bad=%d errors=%v, want one on line 3", tr.BadLines, tr.Errors)
			}
			if tc.field != "-" && tr.Errors[0].Field != tc.field {
				t.Errorf("field = %q, want %q", tr.Errors[0].Field, tc.field)
			}
			var le *LineError
			if !errors.As(serr, &le) || le.Line != 3 || !errors.Is(serr, ErrSyntax) {
				t.Errorf("strict error = %v, want line 3", serr)
			}
		})
	}
}

func TestReadGPUCSVHeaderErrors(t *testing.T) {
	for _, in := range []string{"", "\n\n", "submit,gpus\n1,2\n", "a,b,c\n"} {
		if _, err := ReadGPUCSV(strings.NewReader(in), Options{}); !errors.Is(err, ErrFormat) {
			t.Errorf("%q: err = %v, want ErrFormat", in, err)
		}
	}
}

func TestReadDetectsFormat(t *testing.T) {
	tests := []struct {
		name, in string
		want     Format
	}{
		{"swf header", "; MaxProcs: 4\n1 0 0 10 1 -1 -1 1 60 -1 1 1 1 -1 -1 -1 -1 -1\n", FormatSWF},
		{"swf bare", "\n  1 0 0 10 1 -1 -1 1 60 -1 1 1 1 -1 -1 -1 -1 -1\n", FormatSWF},
		{"csv", "submit,runtime,gpus\n0,10,1\n", FormatGPUCSV},
	}
	for _, tc := range tests {
		tr, err := Read(strings.NewReader(tc.in), "", Options{Strict: true})
		if err != nil || tr.Format != tc.want || len(tr.Jobs) != 1 {
			t.Errorf("%s: %v, %v", tc.name, tr, err)
		}
	}
	if Sniff("x.SWF", nil) != FormatSWF || Sniff("x.csv", nil) != FormatGPUCSV || Sniff("x", nil) != "" {
		t.Error("Sniff by extension")
	}
	if _, err := Read(strings.NewReader(""), "json", Options{}); !errors.Is(err, ErrFormat) {
		t.Errorf("unknown format: %v", err)
	}
}
