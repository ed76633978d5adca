package reports

import (
	"bytes"
	"encoding/xml"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestWriteFolder(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "reports", "nightly")
	r := sampleRun()
	p, err := WriteFolder(dir, r, HTMLOptions{Now: t0})
	if err != nil {
		t.Fatal(err)
	}
	want := Paths{HTML: filepath.Join(dir, "report.html"), JSON: filepath.Join(dir, "report.json"), JUnit: filepath.Join(dir, "junit.xml")}
	if p != want {
		t.Errorf("paths = %+v, want %+v", p, want)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 3 {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("folder holds %v: temporary files left behind?", names)
	}
	f, err := os.Open(p.JSON)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	back, err := ReadJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, r) {
		t.Error("report.json does not read back as the run")
	}
	var html bytes.Buffer
	if err := WriteHTML(&html, r, HTMLOptions{Now: t0}); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(p.HTML); !bytes.Equal(got, html.Bytes()) {
		t.Error("report.html differs from WriteHTML's output")
	}

	// An invalid run leaves the previous reports untouched.
	before, _ := os.ReadFile(p.JUnit)
	bad := sampleRun()
	bad.Specs[0].Status, bad.Specs[0].Reason = StatusSkipped, ""
	if _, err := WriteFolder(dir, bad, HTMLOptions{}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("invalid run: err = %v", err)
	}
	if after, _ := os.ReadFile(p.JUnit); !bytes.Equal(before, after) {
		t.Error("a rejected run overwrote junit.xml")
	}
}

func TestWriteFolderUnwritable(t *testing.T) {
	file := filepath.Join(t.TempDir(), "not-a-dir")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := WriteFolder(filepath.Join(file, "sub"), sampleRun(), HTMLOptions{})
	if err == nil || !strings.Contains(err.Error(), "not-a-dir") {
		t.Errorf("err = %v, want an error naming the directory", err)
	}
}

func TestJUnitStructure(t *testing.T) {
	var b bytes.Buffer
	if err := WriteJUnit(&b, sampleRun()); err != nil {
		t.Fatal(err)
	}
	var doc junitSuites
	if err := xml.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatalf("not well-formed XML: %v", err)
	}
	if doc.Tests != 15 || doc.Failures != 2 || doc.Errors != 1 || doc.Skipped != 3 || doc.Time != "2400.000" {
		t.Errorf("totals = tests %d failures %d errors %d skipped %d time %s", doc.Tests, doc.Failures, doc.Errors, doc.Skipped, doc.Time)
	}
	var names []string
	for _, s := range doc.Suites {
		names = append(names, s.Name)
	}
	if strings.Join(names, ",") != "nvidia,amd,parity" {
		t.Errorf("suites = %v, want vendors in run order then parity", names)
	}
	amd := doc.Suites[1]
	if amd.Tests != 5 || amd.Failures != 1 || amd.Errors != 1 || amd.Skipped != 1 {
		t.Errorf("amd suite counts = %+v", amd)
	}
	byName := map[string]junitCase{}
	for _, c := range amd.Cases {
		byName[c.Name] = c
	}
	iso := byName["isolation/visible-devices"]
	if iso.Failure == nil || iso.Failure.Message != "job saw 3 GPUs, was given 2" || !strings.Contains(iso.Failure.Body, "ROCR_VISIBLE_DEVICES=0,1,2") || iso.Time != "3.400" {
		t.Errorf("failing case = %+v", iso)
	}
	if sk := byName["health/fatal-drains"]; sk.Skipped == nil || sk.Skipped.Message != "lab has no RAS fault injection for this preset" {
		t.Errorf("skipped case = %+v", sk)
	}
	if er := byName["driver-contract/partitions"]; er.Error == nil || !strings.Contains(er.Error.Body, "permission denied") {
		t.Errorf("error case = %+v", er)
	}
	for _, c := range doc.Suites[2].Cases {
		if c.Name == "parity/isolation/visible-devices" && (c.Failure == nil || !strings.Contains(c.Failure.Body, "nvidia: visible=0,1 ; amd: visible=0,1,2")) {
			t.Errorf("parity case = %+v", c)
		}
	}
}

func TestWriteMatrix(t *testing.T) {
	var plain, colour bytes.Buffer
	if err := WriteMatrix(&plain, sampleRun(), false); err != nil {
		t.Fatal(err)
	}
	if err := WriteMatrix(&colour, sampleRun(), true); err != nil {
		t.Fatal(err)
	}
	for i, c := range plain.Bytes() {
		if c > 0x7e || (c < 0x20 && c != '\n') {
			t.Fatalf("plain matrix has non-ASCII or control byte %#x at %d", c, i)
		}
	}
	if !bytes.Contains(colour.Bytes(), []byte(ansiRed+"FAIL"+ansiReset)) {
		t.Error("coloured matrix does not colour failures")
	}
	// Stripping colour gives the plain matrix: colour never shifts columns.
	stripped := stripANSI(colour.String())
	if stripped != plain.String() {
		t.Errorf("coloured matrix minus colour differs from plain:\n%s\n---\n%s", stripped, plain.String())
	}
	lines := strings.Split(plain.String(), "\n")
	var iso string
	for _, l := range lines {
		if strings.HasPrefix(l, "isolation/visible-devices") {
			iso = l
		}
	}
	if f := strings.Fields(iso); len(f) != 4 || f[1] != "PASS" || f[2] != "FAIL" || f[3] != "FAIL" {
		t.Errorf("isolation row = %q, want PASS FAIL FAIL (nvidia, amd, parity)", iso)
	}
	for _, want := range []string{"SKIP health/fatal-drains [amd]: lab has no RAS fault injection", "10 results: 7 passed, 1 failed, 1 error, 1 skipped", "passed                      5/5     2/5   2/5"} {
		if !strings.Contains(plain.String(), want) {
			t.Errorf("matrix lacks %q", want)
		}
	}
}

func stripANSI(s string) string {
	for _, c := range []string{ansiReset, ansiGreen, ansiRed, ansiYellow} {
		s = strings.ReplaceAll(s, c, "")
	}
	return s
}
