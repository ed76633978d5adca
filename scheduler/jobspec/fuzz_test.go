package jobspec

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// The fuzz targets check that no input panics and that every accepted value
// reads back from its canonical form.

func FuzzScanDirectives(f *testing.F) {
	f.Add("#!/bin/bash\n#SBATCH -N 2 -t 10 # c\n#SBATCH --job-name=\"a b\"\necho\n#SBATCH -J x\n")
	f.Add("#!/bin/sh\n#SLURM --array=0-9%2 --dependency=afterok:1?afterany:2\n")
	f.Add("#!/bin/sh\n#SBATCH --gpus-per-task=1 -n 4 --ntasks-per-gpu=2 --constraint='[a|b]'\n")
	f.Add("#!/bin/sh\n#SBATCH -w n[1-3] -x n[4-5] --mem=0 --begin=now+1hour --signal=B:USR1\n")
	f.Fuzz(func(t *testing.T, script string) {
		dirs, _, err := ScanDirectives([]byte(script))
		if err != nil {
			return
		}
		last := 0
		for _, d := range dirs {
			if d.Line <= last || !strings.HasPrefix(d.Text, "#S") {
				t.Fatalf("directive %+v out of order or without a prefix", d)
			}
			last = d.Line
		}
		// The whole pipeline must not panic either; errors are fine.
		req, err := Parse([]byte(script), nil, nil, ParseOptions{Now: tuesday})
		if err == nil && (req.NTasks < 1 || req.Output == "" || req.Name == "") {
			t.Fatalf("accepted request without defaults: %+v", req)
		}
	})
}

func FuzzParseDuration(f *testing.F) {
	for _, s := range []string{"90", "10:30", "2:00:00", "1-12", "1-12:30", "7-00:00:00", "UNLIMITED", "-1", "0", "1:2-3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseDuration(s)
		if err != nil {
			return
		}
		if d != Unlimited && (d < 0 || d%time.Second != 0) {
			t.Fatalf("ParseDuration(%q) = %v", s, d)
		}
		back, err := ParseDuration(FormatDuration(d))
		if err != nil || back != d {
			t.Fatalf("ParseDuration(%q) = %v; FormatDuration %q reads back as %v, %v", s, d, FormatDuration(d), back, err)
		}
		if lim, err := ParseTimeLimit(s); err != nil || lim < d && lim != Unlimited || lim%time.Minute != 0 && lim != Unlimited {
			t.Fatalf("ParseTimeLimit(%q) = %v, %v", s, lim, err)
		}
	})
}

func FuzzParseTime(f *testing.F) {
	for _, s := range []string{"2026-04-01T10:20:30", "16:00", "4:00 PM", "now+1hour", "tomorrow18:00", "teatime", "040126", "01/15", "04.01.2027"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := ParseTime(s, tuesday, time.UTC)
		if err != nil {
			return
		}
		back, err := ParseTime(FormatTime(got, time.UTC), tuesday, time.UTC)
		if err != nil || !back.Equal(got) {
			t.Fatalf("ParseTime(%q) = %v; %q reads back as %v, %v", s, got, FormatTime(got, time.UTC), back, err)
		}
	})
}

func FuzzParseArray(f *testing.F) {
	for _, s := range []string{"0-99", "1,3,5-9", "0-30:3", "0-15:4%2", "0-10,5-15", "0-20:2,1-21:2", "7"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		a, err := ParseArray(s, 0)
		if err != nil {
			return
		}
		if a.Len() < 1 || a.Len() > DefaultMaxArraySize || len(a.Ranges()) > a.Len() {
			t.Fatalf("ParseArray(%q): %d tasks in %d ranges", s, a.Len(), len(a.Ranges()))
		}
		back, err := ParseArray(a.String(), 0)
		if err != nil || back.String() != a.String() || back.Len() != a.Len() || back.Limit != a.Limit {
			t.Fatalf("ParseArray(%q) = %s; reads back as %v, %v", s, a, back, err)
		}
		all := slices.Collect(a.All())
		if len(all) != a.Len() || !slices.IsSorted(all) || all[0] != a.Min() || all[len(all)-1] != a.Max() {
			t.Fatalf("ParseArray(%q): All = %v", s, all)
		}
		for _, i := range all {
			if !a.Contains(i) {
				t.Fatalf("ParseArray(%q): Contains(%d) = false", s, i)
			}
		}
		if a.Contains(a.Max()+1) || a.Contains(a.Min()-1) {
			t.Fatalf("ParseArray(%q): Contains outside [min, max]", s)
		}
	})
}

func FuzzParseDependency(f *testing.F) {
	for _, s := range []string{"afterok:1:2", "after:5+10", "afterany:7_3", "afterok:20:21?afterany:23", "singleton", "123", "afterok:1,singleton"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseDependency(s)
		if err != nil {
			return
		}
		back, err := ParseDependency(d.String())
		if err != nil || !reflect.DeepEqual(back, d) {
			t.Fatalf("ParseDependency(%q) = %+v; %q reads back as %+v, %v", s, d, d.String(), back, err)
		}
	})
}

func FuzzExpandHostlist(f *testing.F) {
	for _, s := range []string{"n[1-3]", "n[08-10]", "node[01-02,05],gpu-a[1-2]", "rack[0-1]_blade[0-3]", "tux2,tux1,tux2", "a1b,a2b", "n[9-10]"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		hosts, err := ExpandHostlist(s)
		if err != nil || len(hosts) > 4096 {
			return // keep iterations fast; large lists are covered by unit tests
		}
		c := CompressHostlist(hosts)
		back, err := ExpandHostlist(c)
		if err != nil || !slices.Equal(back, hosts) {
			t.Fatalf("ExpandHostlist(%q) = %v; compressed %q expands to %v, %v", s, hosts, c, back, err)
		}
		sorted, err := ExpandHostlist(CompressHostlistSorted(hosts))
		if err != nil || len(sorted) != len(hosts) {
			t.Fatalf("sorted compression of %v lost hosts: %v, %v", hosts, sorted, err)
		}
		a, b := slices.Clone(sorted), slices.Clone(hosts)
		slices.Sort(a)
		slices.Sort(b)
		if !slices.Equal(a, b) {
			t.Fatalf("sorted compression of %v is not a permutation: %v", hosts, sorted)
		}
	})
}

func FuzzExpandPattern(f *testing.F) {
	for _, s := range []string{"slurm-%j.out", "%A_%a", "%12j", "%%", "job\\%j", "%", "%5", "%N-%n-%t"} {
		f.Add(s)
	}
	v := Vars{JobID: 42, ArrayJobID: 40, ArrayTaskID: 2, InArray: true, JobName: "x", User: "u", NodeName: "n1"}
	f.Fuzz(func(t *testing.T, s string) {
		out := Expand(s, v)
		switch {
		case strings.Contains(s, "\\"):
			if out != strings.ReplaceAll(s, "\\", "") {
				t.Fatalf("Expand(%q) = %q; a backslash disables expansion", s, out)
			}
		case !strings.Contains(s, "%"):
			if out != s {
				t.Fatalf("Expand(%q) = %q; want it unchanged", s, out)
			}
		}
	})
}

func FuzzParseConstraint(f *testing.F) {
	for _, s := range []string{"a|b&c", "a&(b|c)", "gpu*4", "[r1|r2|r3]", "[rack1*2&rack2*4]", "h100&[r1|r2]", "((a))"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := ParseConstraint(s)
		if err != nil {
			return
		}
		back, err := ParseConstraint(c.String())
		if err != nil || !equalConstraint(back, c) {
			t.Fatalf("ParseConstraint(%q) = %s; reads back as %v, %v", s, c, back, err)
		}
	})
}

func FuzzParseSignalExport(f *testing.F) {
	for _, s := range []string{"B:USR1@120", "RB:SIGTERM@30", "ALL,A=1,B", `A="x,y",B='p'`, "NONE", "A=\",\",A=' '"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if sig, err := ParseSignal(s); err == nil {
			if back, err := ParseSignal(sig.String()); err != nil || back != sig {
				t.Fatalf("ParseSignal(%q) = %+v; %q reads back as %+v, %v", s, sig, sig.String(), back, err)
			}
		}
		if e, err := ParseExport(s); err == nil {
			if back, err := ParseExport(e.String()); err != nil || !reflect.DeepEqual(back, e) {
				t.Fatalf("ParseExport(%q) = %+v; %q reads back as %+v, %v", s, e, e.String(), back, err)
			}
		}
	})
}
