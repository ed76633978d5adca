package jobspec

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestScanDirectives(t *testing.T) {
	script := strings.Join([]string{
		"#!/bin/bash",        // 1: shebang is a comment
		"#SBATCH -N 2 -t 10", // 2
		`#SBATCH --job-name="my job" # trailing comment`, // 3
		"",                                 // 4
		"# plain comment",                  // 5
		"   # indented comment",            // 6
		" #SBATCH --indented-is-a-comment", // 7
		"# SBATCH --spaced-is-a-comment",   // 8
		"#sbatch --lowercase-is-a-comment", // 9
		"#SBATCH --comment='a b' --output=\"x\\\"y\"", // 10
		`#SBATCH --comment=a\ b -o job#1.out`,         // 11
		"#SBATCH --comment='$HOME $(date)'",           // 12
		"echo start",                                  // 13: first command
		"#SBATCH --after-first-command",               // 14
	}, "\n")
	dirs, warnings, err := ScanDirectives([]byte(script))
	if err != nil || len(warnings) != 0 {
		t.Fatalf("ScanDirectives: %v, %v", err, warnings)
	}
	want := []struct {
		line  int
		words []string
	}{
		{2, []string{"-N", "2", "-t", "10"}},
		{3, []string{"--job-name=my job"}},
		{10, []string{"--comment=a b", `--output=x"y`}},
		{11, []string{"--comment=a b", "-o", "job#1.out"}},
		{12, []string{"--comment=$HOME $(date)"}},
	}
	if len(dirs) != len(want) {
		t.Fatalf("got %d directives %+v; want %d", len(dirs), dirs, len(want))
	}
	for i, w := range want {
		if dirs[i].Line != w.line || !reflect.DeepEqual(dirs[i].Words, w.words) || dirs[i].Prefix != DirectivePrefix {
			t.Errorf("directive %d = line %d %q; want line %d %q", i, dirs[i].Line, dirs[i].Words, w.line, w.words)
		}
	}
}

func TestScanDirectivesLegacyAndErrors(t *testing.T) {
	dirs, warnings, err := ScanDirectives([]byte("#!/bin/sh\n#SLURM -N 1\n"))
	if err != nil || len(dirs) != 1 || dirs[0].Prefix != LegacyDirectivePrefix || len(warnings) != 1 || !strings.Contains(warnings[0], "line 2") {
		t.Fatalf("legacy #SLURM: %+v, %v, %v", dirs, warnings, err)
	}
	_, _, err = ScanDirectives([]byte("#!/bin/sh\n#SBATCH -N 1\n#SBATCH --comment=\"open\n"))
	var de *DirectiveError
	if !errors.As(err, &de) || de.Line != 3 || !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "Invalid directive found in batch script") {
		t.Fatalf("unterminated quote: %v", err)
	}
	dirs, _, err = ScanDirectives([]byte("#!/bin/sh\r\n#SBATCH -N 3\r\necho\r\n"))
	if err != nil || len(dirs) != 1 || !reflect.DeepEqual(dirs[0].Words, []string{"-N", "3"}) {
		t.Fatalf("CRLF lines: %+v, %v", dirs, err)
	}
}

func TestSplitWords(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"  a  b\tc ", []string{"a", "b", "c"}},
		{`"a b"'c d'e`, []string{"a bc de"}},
		{`a\#b #rest`, []string{"a#b"}},
		{`"\\" "\a"`, []string{`\`, `\a`}},
		{`''`, []string{""}},
		{`x\`, []string{"x"}},
	}
	for _, tt := range tests {
		got, err := SplitWords(tt.in)
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("SplitWords(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
	for _, in := range []string{`'open`, `"open`, `"a\"`} {
		if _, err := SplitWords(in); err == nil {
			t.Errorf("SplitWords(%q) must fail", in)
		}
	}
}
