package accounting

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestParseJobSelectors(t *testing.T) {
	got, err := ParseJobSelectors("123,456_7,789.batch,42_3.0")
	if err != nil {
		t.Fatal(err)
	}
	want := []JobSelector{
		{ID: 123, Task: -1},
		{ID: 456, Task: 7},
		{ID: 789, Task: -1, Step: "batch", HasStep: true},
		{ID: 42, Task: 3, Step: "0", HasStep: true},
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("selector %d = %+v, want %+v", i, got[i], want[i])
		}
	}
	for _, bad := range []string{"", "abc", "12,", "0", "12_x", "12.bogus", "12.", "-3", "12_3_4"} {
		_, err := ParseJobSelectors(bad)
		if !errors.Is(err, ErrBadFilter) || !strings.Contains(err.Error(), `"`+bad+`"`) {
			t.Errorf("ParseJobSelectors(%q) err = %v, want ErrBadFilter naming it", bad, err)
		}
	}
}

func TestFilterMatches(t *testing.T) {
	recs := sampleRecords(t) // 100, 100.batch, 100.extern, 200_5 (205), 300
	at := func(h, m int) time.Time { return time.Date(2024, 3, 13, h, m, 0, 0, time.UTC) }
	sel := func(s string) []JobSelector {
		js, err := ParseJobSelectors(s)
		if err != nil {
			t.Fatal(err)
		}
		return js
	}
	tests := []struct {
		name string
		f    Filter
		want string // JobIDs selected, in order
	}{
		{"everything", Filter{}, "100 100.batch 100.extern 200_5 300"},
		{"user", Filter{Users: []string{"alice"}}, "100 100.batch 100.extern 300"},
		{"account and state", Filter{Accounts: []string{"chem", "physics"}, States: []JobState{StateCancelled}}, "200_5"},
		// -s R: the lines that ran at some time in the window, whatever
		// they ended as, as slurmdbd selects (the anchor's sacct -s CA,R
		// lists completed jobs); an end state: lines that ended so in it.
		{"ran in the window", Filter{States: []JobState{StateRunning}, Start: at(10, 6), End: testNow}, "300"},
		{"ran in a window before 200_5 started", Filter{States: []JobState{StateRunning}, Start: at(9, 0), End: at(9, 10)}, "100 100.batch 100.extern"},
		{"completed in the window", Filter{States: []JobState{StateCompleted}, Start: at(9, 0), End: testNow}, "100 100.batch 100.extern"},
		{"completed after the window", Filter{States: []JobState{StateCompleted}, Start: at(9, 0), End: at(9, 10)}, ""},
		{"allocations only", Filter{AllocationsOnly: true}, "100 200_5 300"},
		{"partition", Filter{Partitions: []string{"mi300"}}, "300"},
		{"job id", Filter{Jobs: sel("100")}, "100 100.batch 100.extern"},
		{"array by its job id", Filter{Jobs: sel("200")}, "200_5"},
		{"array task", Filter{Jobs: sel("200_5")}, "200_5"},
		{"array task by raw id", Filter{Jobs: sel("205")}, "200_5"},
		{"other array task", Filter{Jobs: sel("200_6")}, ""},
		{"step", Filter{Jobs: sel("100.batch")}, "100.batch"},
		// Window: a line is in if it began by End and had not ended before Start.
		{"window before everything", Filter{Start: at(6, 0), End: at(7, 0)}, ""},
		{"window inside job 100", Filter{Start: at(9, 0), End: at(9, 10)}, "100 100.batch 100.extern 200_5"},
		{"window after 100 ended", Filter{Start: at(10, 6), End: at(15, 0)}, "300"},
		{"window touching 100's end", Filter{Start: at(10, 5), End: at(10, 5)}, "100 100.batch 100.extern"},
		{"running job at now", Filter{Start: testNow, End: testNow}, "300"},
		{"name", Filter{Names: []string{"sweep"}}, "200_5"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for i := range recs {
				if tc.f.Matches(&recs[i]) {
					got = append(got, recs[i].IDString())
				}
			}
			if strings.Join(got, " ") != tc.want {
				t.Fatalf("selected %q, want %q", strings.Join(got, " "), tc.want)
			}
		})
	}
}

func TestResolveWindow(t *testing.T) {
	midnight := time.Date(2024, 3, 13, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name       string
		in         WindowInput
		start, end time.Time
	}{
		{"default: since midnight", WindowInput{}, midnight, testNow},
		{"-j: since the epoch", WindowInput{HaveJobs: true}, time.Unix(0, 0), testNow},
		{"-s alone: at now", WindowInput{HaveStates: true}, testNow, testNow},
		// The anchor's sacct: with -s, no -E means the window ends at -S.
		{"-s with -S", WindowInput{HaveStates: true, Start: "2024-03-01"}, time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC), time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC)},
		{"-s with -S and -E", WindowInput{HaveStates: true, Start: "2024-03-01", End: "now"}, time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC), testNow},
		{"-S and -E", WindowInput{Start: "2024-03-01", End: "2024-03-02T12:00"}, time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC), time.Date(2024, 3, 2, 12, 0, 0, 0, time.UTC)},
		{"relative", WindowInput{Start: "now-2days"}, testNow.Add(-48 * time.Hour), testNow},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			start, end, err := ResolveWindow(tc.in, testNow, time.UTC)
			if err != nil {
				t.Fatal(err)
			}
			if !start.Equal(tc.start) || !end.Equal(tc.end) {
				t.Fatalf("window = [%v, %v], want [%v, %v]", start, end, tc.start, tc.end)
			}
		})
	}
	errs := []struct {
		in      WindowInput
		mention string
	}{
		{WindowInput{Start: "2024-03-02", End: "2024-03-01"}, "--endtime 2024-03-01T00:00:00 is before --starttime"},
		{WindowInput{Start: "garbage"}, `--starttime: accounting: invalid time "garbage"`},
		{WindowInput{End: "25:00"}, `--endtime: accounting: invalid time "25:00"`},
	}
	for _, tc := range errs {
		if _, _, err := ResolveWindow(tc.in, testNow, time.UTC); err == nil || !strings.Contains(err.Error(), tc.mention) {
			t.Errorf("ResolveWindow(%+v) err = %v, want mention of %q", tc.in, err, tc.mention)
		}
	}
}

func TestParseStates(t *testing.T) {
	got, err := ParseStates("r,CD,failed,OOM,ca,Timeout")
	if err != nil {
		t.Fatal(err)
	}
	want := []JobState{StateRunning, StateCompleted, StateFailed, StateOutOfMemory, StateCancelled, StateTimeout}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("state %d = %s, want %s", i, got[i], want[i])
		}
	}
	for _, bad := range []string{"RUNNIN", "r,,cd", "x"} {
		if _, err := ParseStates(bad); !errors.Is(err, ErrBadState) {
			t.Errorf("ParseStates(%q) err = %v", bad, err)
		}
	}
	for _, c := range stateCodes {
		if st, err := ParseState(c.code); err != nil || st != c.state || st.Code() != c.code {
			t.Errorf("code %s ↔ %s broken: %v %v", c.code, c.state, st, err)
		}
	}
}

func TestLatestRunsAndSort(t *testing.T) {
	mk := func(id uint64, run int, step string) JobRecord {
		return JobRecord{JobID: id, Run: run, Step: step, User: "u", State: StateCompleted}
	}
	recs := []JobRecord{mk(7, 1, "0"), mk(7, 0, ""), mk(3, 0, "extern"), mk(7, 1, ""), mk(3, 0, "batch"), mk(7, 1, "10"), mk(7, 1, "2"), mk(3, 0, "")}
	SortRecords(recs)
	var got []string
	for _, r := range recs {
		got = append(got, r.IDString()+"#"+string(rune('0'+r.Run)))
	}
	if s := strings.Join(got, " "); s != "3#0 3.batch#0 3.extern#0 7#0 7#1 7.0#1 7.2#1 7.10#1" {
		t.Fatalf("sorted = %s", s)
	}
	latest := LatestRuns(recs)
	if len(latest) != 7 || latest[3].Run != 1 {
		t.Fatalf("LatestRuns kept %d lines: %+v", len(latest), latest)
	}
}

func TestValidate(t *testing.T) {
	ok := sampleRecords(t)[0]
	if err := ok.Validate(); err != nil {
		t.Fatalf("valid record: %v", err)
	}
	tests := []struct {
		name    string
		mutate  func(r *JobRecord)
		mention string
	}{
		{"zero id", func(r *JobRecord) { r.JobID = 0 }, "JobID"},
		{"negative run", func(r *JobRecord) { r.Run = -1 }, "Run=-1"},
		{"bad step", func(r *JobRecord) { r.Step = "prolog" }, `Step="prolog"`},
		{"no user", func(r *JobRecord) { r.User = "" }, "User"},
		{"bad state", func(r *JobRecord) { r.State = "DONE" }, `State="DONE"`},
		{"end before start", func(r *JobRecord) { r.End = r.Start.Add(-time.Second) }, "End"},
		{"uuid with comma", func(r *JobRecord) { r.GPUUUIDs = []string{"GPU-a,GPU-b"} }, "GPU UUID"},
		{"negative TRES", func(r *JobRecord) { r.AllocTRES = TRES{"cpu": -1} }, "AllocTRES"},
	}
	for _, tc := range tests {
		r := ok
		tc.mutate(&r)
		err := r.Validate()
		if !errors.Is(err, ErrInvalidRecord) || !strings.Contains(err.Error(), tc.mention) {
			t.Errorf("%s: err = %v, want ErrInvalidRecord mentioning %s", tc.name, err, tc.mention)
		}
	}
}
