package jobspec

import (
	"errors"
	"maps"
	"reflect"
	"testing"
)

func TestParseExport(t *testing.T) {
	tests := []struct {
		in   string
		want Export
		text string
	}{
		{"ALL", Export{Mode: ExportAll}, "ALL"},
		{"none", Export{Mode: ExportNone}, "NONE"},
		{"NIL", Export{Mode: ExportNil}, "NIL"},
		{"ALL,A=1,B", Export{Mode: ExportAll, Vars: []ExportVar{{"A", "1", true}, {"B", "", false}}}, "ALL,A=1,B"},
		{"A=1,B", Export{Mode: ExportList, Vars: []ExportVar{{"A", "1", true}, {"B", "", false}}}, "A=1,B"},
		{`A="x,y",B='p,"q'`, Export{Mode: ExportList, Vars: []ExportVar{{"A", "x,y", true}, {"B", `p,"q`, true}}}, `A='x,y',B='p,"q'`},
		{"EMPTY=", Export{Mode: ExportList, Vars: []ExportVar{{"EMPTY", "", true}}}, "EMPTY="},
		{"A=b=c", Export{Mode: ExportList, Vars: []ExportVar{{"A", "b=c", true}}}, "A=b=c"},
	}
	for _, tt := range tests {
		got, err := ParseExport(tt.in)
		if err != nil || !reflect.DeepEqual(got, tt.want) || got.String() != tt.text {
			t.Errorf("ParseExport(%q) = %+v (%s), %v; want %+v (%s)", tt.in, got, got, err, tt.want, tt.text)
		}
		if back, err := ParseExport(tt.text); err != nil || !reflect.DeepEqual(back, tt.want) {
			t.Errorf("ParseExport(%q) = %+v, %v", tt.text, back, err)
		}
	}
	for _, in := range []string{"", "NONE,A", "A,ALL", "1A=2", `A="unterminated`, `A="x"y`, "A=1,,B", "A-B=1"} {
		if _, err := ParseExport(in); !errors.Is(err, ErrInvalid) {
			t.Errorf("ParseExport(%q) error = %v; want ErrInvalid", in, err)
		}
	}
}

func TestExportApply(t *testing.T) {
	submit := map[string]string{"HOME": "/home/u", "PATH": "/bin", "SLURM_CONF": "/etc/slurm.conf", "A": "orig"}
	tests := []struct {
		export string
		want   map[string]string
	}{
		{"ALL", submit},
		{"ALL,A=new,C=3", map[string]string{"HOME": "/home/u", "PATH": "/bin", "SLURM_CONF": "/etc/slurm.conf", "A": "orig", "C": "3"}},
		{"NONE", map[string]string{"SLURM_CONF": "/etc/slurm.conf"}},
		{"NIL", map[string]string{"SLURM_CONF": "/etc/slurm.conf"}},
		{"A,B=2,Z", map[string]string{"SLURM_CONF": "/etc/slurm.conf", "A": "orig", "B": "2"}},
	}
	for _, tt := range tests {
		e, err := ParseExport(tt.export)
		if err != nil {
			t.Fatal(err)
		}
		if got := e.Apply(submit); !maps.Equal(got, tt.want) {
			t.Errorf("--export=%s: %v; want %v", tt.export, got, tt.want)
		}
	}
}
