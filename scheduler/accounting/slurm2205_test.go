package accounting

import (
	"bufio"
	"bytes"
	"errors"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The recorded Slurm 22.05 outputs these tests compare with live in
// testdata/slurm2205_*: each file says how it was taken on the anchor.

// exitPair reads sacct's "code:signal".
func exitPair(t *testing.T, s string) (int, int) {
	t.Helper()
	c, sig, ok := strings.Cut(s, ":")
	code, err1 := strconv.Atoi(c)
	signal, err2 := strconv.Atoi(sig)
	if !ok || err1 != nil || err2 != nil {
		t.Fatalf("exit code %q is not code:signal", s)
	}
	return code, signal
}

// derivedDifferences are the recorded runs where Parity's DerivedExitCode
// differs from Slurm's, and why.
var derivedDifferences = map[string]string{
	// Step 4.0 ended by SIGKILL (0:9) yet Slurm derived 0:0: slurmctld
	// never counted that step's status. Parity counts every srun step.
	"4": "a step killed by SIGKILL",
}

// DerivedExitCode is derived from the step lines as Slurm derived it on
// the anchor: the highest status of the srun steps, exit codes above
// signals, batch step left out.
func TestDeriveExitCodeAsSlurm2205(t *testing.T) {
	f, err := os.Open("testdata/slurm2205_derived.psv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	type run struct {
		id, derived string
		lines       []JobRecord
	}
	var runs []*run
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "#") || strings.HasPrefix(sc.Text(), "JobID|") {
			continue
		}
		c := strings.Split(sc.Text(), "|")
		if len(c) != 5 {
			t.Fatalf("line %q: want 5 fields", sc.Text())
		}
		id, step, _ := strings.Cut(c[0], ".")
		if step == "" {
			runs = append(runs, &run{id: id, derived: c[4]})
			continue
		}
		code, sig := exitPair(t, c[3])
		r := runs[len(runs)-1]
		r.lines = append(r.lines, JobRecord{Step: step, ExitCode: code, ExitSignal: sig})
	}
	if len(runs) < 9 {
		t.Fatalf("%d recorded runs, want at least 9", len(runs))
	}
	for _, r := range runs {
		wantCode, wantSig := exitPair(t, r.derived)
		code, sig := DeriveExitCode(r.lines)
		if why, ok := derivedDifferences[r.id]; ok {
			if code == wantCode && sig == wantSig {
				t.Errorf("job %s (%s) no longer differs from Slurm: drop it from derivedDifferences", r.id, why)
			}
			continue
		}
		if code != wantCode || sig != wantSig {
			t.Errorf("job %s: derived %d:%d from %+v, Slurm derived %s", r.id, code, sig, r.lines, r.derived)
		}
	}
}

// helpformatNames reads the recorded sacct --helpformat.
func helpformatNames(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile("testdata/slurm2205_helpformat.txt")
	if err != nil {
		t.Fatal(err)
	}
	return strings.Fields(string(b))
}

// Every field Slurm lists is known by name, in Slurm's order (which the
// abbreviations depend on); those Parity records print, the others are
// refused saying Parity does not record them, and a name Slurm does not
// know is refused in Slurm's words.
func TestFieldsAreSlurm2205s(t *testing.T) {
	names := helpformatNames(t)
	if !slices.Equal(names, slurmFields) {
		t.Fatalf("slurmFields differs from the recorded --helpformat:\n%v\n%v", slurmFields, names)
	}
	order := matchOrder()
	var slurmOrder []string
	for _, n := range order {
		if slices.Contains(names, n) {
			slurmOrder = append(slurmOrder, n)
		}
	}
	if !slices.Equal(slurmOrder, names) {
		t.Fatalf("the match order puts Slurm's fields as\n%v\nnot as sacct lists them", slurmOrder)
	}
	recorded := []string{"Account", "AllocCPUS", "AllocNodes", "AllocTRES", "CPUTime", "CPUTimeRAW", "DerivedExitCode",
		"Elapsed", "ElapsedRaw", "Eligible", "End", "ExitCode", "JobID", "JobIDRaw", "JobName", "MaxRSS", "NCPUS", "NNodes",
		"NodeList", "Partition", "QOS", "ReqCPUS", "ReqMem", "ReqNodes", "ReqTRES", "Reserved", "Start", "State", "Submit",
		"Timelimit", "TimelimitRaw", "TotalCPU", "TRESUsageInAve", "TRESUsageInMax", "User"}
	for _, n := range names {
		cols, err := ParseFormat(n)
		var fe *FieldError
		switch {
		case slices.Contains(recorded, n):
			if err != nil || cols[0].Header() != n {
				t.Errorf("%s: %v, want the field", n, err)
			}
		case !errors.As(err, &fe) || !fe.NotRecorded || !strings.Contains(err.Error(), "not recorded by Parity"):
			t.Errorf("%s: %v, want refused as not recorded by Parity", n, err)
		}
	}
	_, err := ParseFormat("JobID,Foo")
	if !errors.Is(err, ErrBadFormat) || err.Error() != `Invalid field requested: "Foo"` {
		t.Errorf("an unknown field: %v, want Slurm's Invalid field requested: \"Foo\"", err)
	}
}

// recordedTable is one command and its output in testdata/slurm2205_format.txt.
type recordedTable struct {
	format string
	out    []string
}

func recordedFormats(t *testing.T) []recordedTable {
	t.Helper()
	b, err := os.ReadFile("testdata/slurm2205_format.txt")
	if err != nil {
		t.Fatal(err)
	}
	var out []recordedTable
	for _, l := range strings.Split(string(b), "\n") {
		switch {
		case strings.HasPrefix(l, "$ sacct"):
			_, f, _ := strings.Cut(l, "--format=")
			out = append(out, recordedTable{format: f})
		case strings.HasPrefix(l, "#"), strings.HasPrefix(l, "rc="), l == "" || len(out) == 0:
		default:
			out[len(out)-1].out = append(out[len(out)-1].out, l)
		}
	}
	return out
}

// anchorJob3 is job 3 of slurm2205_derived.psv as Parity's ledger holds
// it: one CPU on n3, steps exiting 2 and 7, the batch script 1.
func anchorJob3() []JobRecord {
	start := time.Date(2026, 12, 2, 7, 14, 32, 0, time.UTC)
	base := JobRecord{JobID: 3, Name: "j3", User: "root", Account: "root", Partition: "gpu", QOS: "normal", Submit: start,
		Eligible: start, Start: start, End: start.Add(time.Second), State: StateFailed, ExitCode: 1, NodeList: "n3", NNodes: 1,
		ReqTRES: TRES{TRESCPU: 1, TRESMem: 64000, TRESNode: 1}, AllocTRES: TRES{TRESCPU: 1, TRESMem: 64000, TRESNode: 1}}
	batch, s0, s1 := base, base, base
	batch.Step, batch.Name = StepBatch, ""
	s0.Step, s0.Name, s0.ExitCode, s0.End = "0", "bash", 2, start
	s1.Step, s1.Name, s1.ExitCode = "1", "bash", 7
	base.DerivedExitCode, _ = DeriveExitCode([]JobRecord{batch, s0, s1})
	return []JobRecord{base, batch, s0, s1}
}

// Abbreviated field names mean what sacct takes them for, and the fields
// added for Slurm print as it printed them, widths and empty step cells
// included.
func TestFormatAsSlurm2205Prints(t *testing.T) {
	cases := recordedFormats(t)
	if len(cases) < 5 {
		t.Fatalf("%d recorded commands, want at least 5", len(cases))
	}
	compared := 0
	for _, tc := range cases {
		cols, err := ParseFormat(tc.format)
		switch tc.format {
		case "Foo":
			if err == nil || "sacct: error: "+err.Error() != tc.out[0] {
				t.Errorf("--format=%s: %v, Slurm said %q", tc.format, err, tc.out[0])
			}
			continue
		case "JobID,,State":
			// Slurm stops at the empty item and prints JobID alone;
			// Parity refuses the list, naming the empty item.
			if !errors.Is(err, ErrBadFormat) {
				t.Errorf("--format=%s: %v, want refused", tc.format, err)
			}
			continue
		}
		if err != nil {
			var fe *FieldError
			if !errors.As(err, &fe) || !fe.NotRecorded {
				t.Errorf("--format=%s: %v", tc.format, err)
			}
			// A list naming a field Parity does not record: its headers
			// must still resolve as Slurm's did.
			continue
		}
		header := strings.Fields(tc.out[0])
		var got []string
		for _, c := range cols {
			got = append(got, headerCell(c.Header(), c.Width))
		}
		if !slices.Equal(strings.Fields(strings.Join(got, " ")), header) {
			t.Errorf("--format=%s: columns %v, Slurm printed %v", tc.format, got, header)
		}
		if !strings.Contains(strings.ToLower(tc.format), "derived") {
			continue
		}
		var b bytes.Buffer
		if err := RenderTable(&b, anchorJob3(), cols, View{Now: time.Now()}, TableOptions{}); err != nil {
			t.Fatal(err)
		}
		want := strings.Join(tc.out, "\n") + "\n"
		if trimLines(b.String()) != trimLines(want) {
			t.Errorf("--format=%s printed\n%s\nSlurm printed\n%s", tc.format, b.String(), want)
		}
		compared++
	}
	if compared < 2 {
		t.Errorf("compared %d printed tables with Slurm's, want 2", compared)
	}
}

// Headers of a list that names a field Parity does not record resolve as
// Slurm's did, up to that field.
func TestAbbreviationsResolveAsSlurm2205(t *testing.T) {
	want := map[string]string{"jobn": "JobName", "stat": "State", "exit": "ExitCode", "derived": "DerivedExitCode",
		"e": "Elapsed", "USER": "User", "st": "Start", "elapsedr": "ElapsedRaw", "cpu": "CPUTime", "ncpu": "NCPUS",
		"nn": "NNodes", "node": "NodeList", "reqm": "ReqMem", "reqn": "ReqNodes", "t": "Timelimit", "timelimitr": "TimelimitRaw",
		"alloct": "AllocTRES"}
	for item, name := range want {
		f, err := resolveField(item)
		if err != nil || f.Name != name {
			t.Errorf("%q resolves to %q (%v); sacct took it for %s", item, f.Name, err, name)
		}
	}
	for item, slurm := range map[string]string{"u": "UID", "req": "ReqCPUFreq", "reqc": "ReqCPUFreq"} {
		var fe *FieldError
		if _, err := resolveField(item); !errors.As(err, &fe) || fe.Field != slurm || !fe.NotRecorded {
			t.Errorf("%q: %v; sacct took it for %s, which Parity does not record", item, err, slurm)
		}
	}
}

// trimLines drops the blanks sacct leaves at the end of each line.
func trimLines(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	return strings.Join(lines, "\n")
}
