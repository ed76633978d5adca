package chaos

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// A row keeps the worst verdict its checks gave, and only a failed row
// fails the table: a warning is reported, not a broken invariant.
func TestRowKeepsTheWorstVerdictAndOnlyFailFailsTheTable(t *testing.T) {
	for _, tc := range []struct {
		name   string
		judge  []Verdict
		want   Verdict
		failed bool
	}{
		{"nothing said", nil, Pass, false},
		{"a skip", []Verdict{Skip}, Skip, false},
		{"warnings", []Verdict{Warn, Warn}, Warn, false},
		{"a failure after a warning", []Verdict{Warn, Fail}, Fail, true},
		{"a warning after a failure", []Verdict{Fail, Warn}, Fail, true},
		{"a pass after a failure", []Verdict{Fail, Pass}, Fail, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := Row{Scenario: "s"}
			for _, v := range tc.judge {
				r.judge(v, "because %s", v)
			}
			if r.Verdict != tc.want || len(r.Notes) != len(tc.judge) {
				t.Errorf("verdict %s with %d notes; want %s with %d", r.Verdict, len(r.Notes), tc.want, len(tc.judge))
			}
			tab := Table{Rows: []Row{{Scenario: "ok row"}, r}}
			if tab.Failed() != tc.failed || tab.Worst() != max(tc.want, Pass) {
				t.Errorf("table failed=%v worst=%s; want %v, %s", tab.Failed(), tab.Worst(), tc.failed, tc.want)
			}
		})
	}
}

func sampleTable() *Table {
	kill := Row{Scenario: "controller kill -9", Cases: 20, Elapsed: 95 * time.Second}
	kill.add("acknowledged", count(21853))
	kill.add("lost", 1)
	kill.fail("trial 3: job 7 (a) acknowledged, missing after the restart")
	lag := Row{Scenario: "ledger | outage", Cases: 20, Elapsed: 40 * time.Millisecond}
	lag.add("in the ledger after", secs(61*time.Second))
	lag.warn("the spooled records reached the ledger 61.0 s after")
	return &Table{Rows: []Row{kill, lag, {Scenario: "authz", Cases: 86}}}
}

// The text table aligns its columns and lists each row's notes under it,
// named by scenario.
func TestTableWritesAlignedRowsThenNotes(t *testing.T) {
	var b bytes.Buffer
	if err := sampleTable().Write(&b); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(b.String(), "\n")
	header := lines[0]
	col := strings.Index(header, "FIGURES")
	if col < 0 || !strings.HasPrefix(header, "SCENARIO") {
		t.Fatalf("header %q", header)
	}
	for _, l := range lines[1:3] { // the rows with figures
		if len(l) <= col || l[col-1] != ' ' || l[col] == ' ' {
			t.Errorf("row %q: its figures do not start under FIGURES (column %d)", l, col)
		}
	}
	for _, want := range []string{
		"acknowledged 21,853 · lost 1", "95.0 s", "40 ms", "FAIL", "WARN",
		"\n  controller kill -9: trial 3: job 7 (a) acknowledged, missing after the restart\n",
		"\n  ledger | outage: the spooled records reached the ledger 61.0 s after\n",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, b.String())
		}
	}
	if !strings.Contains(lines[3], "authz") || !strings.HasSuffix(strings.TrimSpace(lines[3]), "ok") {
		t.Errorf("a row with nothing to say reads %q; want it ok", lines[3])
	}
}

// The Markdown table escapes a pipe in a cell and keeps one line a row.
func TestTableWritesMarkdown(t *testing.T) {
	var b bytes.Buffer
	if err := sampleTable().WriteMarkdown(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if !strings.HasPrefix(out, "| scenario | cases | figures | time | verdict |\n|---|") {
		t.Errorf("markdown header:\n%s", out)
	}
	if !strings.Contains(out, "| ledger \\| outage | 20 |") {
		t.Errorf("markdown lacks the ledger row:\n%s", out)
	}
	if !strings.Contains(out, "| controller kill -9 | 20 | acknowledged 21,853 · lost 1 | 95.0 s | FAIL |") {
		t.Errorf("markdown kill row:\n%s", out)
	}
	if !strings.Contains(out, "\n- controller kill -9: trial 3:") {
		t.Errorf("markdown notes:\n%s", out)
	}
}

// Past maxNotes a row's notes are counted, not printed.
func TestTableCountsNotesPastTheLimit(t *testing.T) {
	r := Row{Scenario: "many"}
	for i := 0; i < maxNotes+5; i++ {
		r.fail("note %d", i)
	}
	var b bytes.Buffer
	if err := (&Table{Rows: []Row{r}}).Write(&b); err != nil {
		t.Fatal(err)
	}
	if strings.Count(b.String(), "many: note") != maxNotes || !strings.Contains(b.String(), "many: … and 5 more") {
		t.Errorf("notes:\n%s", b.String())
	}
}

func TestFormats(t *testing.T) {
	for _, tc := range []struct{ got, want string }{
		{count(0), "0"}, {count(999), "999"}, {count(1077), "1,077"}, {count(44066), "44,066"},
		{count(1000000), "1,000,000"}, {count(-1234), "-1,234"},
		{secs(0), "0.0 s"}, {secs(40 * time.Millisecond), "40 ms"}, {secs(1500 * time.Millisecond), "1.5 s"},
		{mib(512 << 20), "512 MiB"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}
