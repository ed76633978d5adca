package main

import (
	"strings"
	"testing"
)

func TestParseBench(t *testing.T) {
	out := `goos: linux
BenchmarkReplayKTH/easy  log line without figures
BenchmarkReplayKTH/fcfs-2  	       1	2472886626 ns/op	     11517 jobs/s
BenchmarkReplayKTH/easy-2  	       1	2063069177 ns/op	     13805 jobs/s	     31954 passes
PASS
`
	m, err := parseBench(strings.NewReader(out), "ReplayKTH/easy")
	if err != nil {
		t.Fatal(err)
	}
	if m["ns/op"] != 2063069177 || m["jobs/s"] != 13805 || m["passes"] != 31954 {
		t.Errorf("metrics %v", m)
	}
	if got := m.seconds("ns/op") + " " + m.int("jobs/s"); got != "2.06 s 13,805" {
		t.Errorf("formatted %q", got)
	}
	if _, err := parseBench(strings.NewReader(out), "ReplayMillion"); err == nil || !strings.Contains(err.Error(), "ReplayMillion") {
		t.Errorf("a missing benchmark: %v", err)
	}
	if _, err := parseBench(strings.NewReader("BenchmarkX-2 1 abc ns/op\n"), "X"); err == nil || !strings.Contains(err.Error(), `"abc"`) {
		t.Errorf("a bad figure: %v", err)
	}
}

func TestSpliceReplacesOnlyTheGeneratedPart(t *testing.T) {
	doc := "# R\nbefore\n" + beginMarker + "\nold table\n" + endMarker + "\nafter\n"
	got, err := splice(doc, "new table\n")
	if err != nil {
		t.Fatal(err)
	}
	want := "# R\nbefore\n" + beginMarker + "\nnew table\n" + endMarker + "\nafter\n"
	if got != want {
		t.Errorf("spliced:\n%s\nwant:\n%s", got, want)
	}
	if _, err := splice("no markers", "x"); err == nil {
		t.Error("a README without markers was filled")
	}
}
