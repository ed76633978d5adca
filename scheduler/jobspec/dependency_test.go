package jobspec

import (
	"errors"
	"reflect"
	"testing"
	"time"
)

func TestParseDependency(t *testing.T) {
	c := func(typ DepType, job uint32) DepCondition { return DepCondition{Type: typ, JobID: job, Task: NoTask} }
	tests := []struct {
		in   string
		want Dependency
		text string
	}{
		{"afterok:123", Dependency{Conditions: []DepCondition{c(DepAfterOK, 123)}}, "afterok:123"},
		{"afterok:1:2", Dependency{Conditions: []DepCondition{c(DepAfterOK, 1), c(DepAfterOK, 2)}}, "afterok:1:2"},
		{"after:5+10", Dependency{Conditions: []DepCondition{{Type: DepAfter, JobID: 5, Task: NoTask, Delay: 10 * time.Minute}}}, "after:5+10"},
		{"afterany:7_3", Dependency{Conditions: []DepCondition{{Type: DepAfterAny, JobID: 7, Task: 3}}}, "afterany:7_3"},
		{"afterok:20:21?afterany:23", Dependency{Any: true, Conditions: []DepCondition{c(DepAfterOK, 20), c(DepAfterOK, 21), c(DepAfterAny, 23)}},
			"afterok:20?afterok:21?afterany:23"},
		{"singleton", Dependency{Conditions: []DepCondition{{Type: DepSingleton, Task: NoTask}}}, "singleton"},
		{"123", Dependency{Conditions: []DepCondition{c(DepAfterAny, 123)}}, "afterany:123"},
		{"afterok:1,singleton,afternotok:2", Dependency{Conditions: []DepCondition{c(DepAfterOK, 1), {Type: DepSingleton, Task: NoTask}, c(DepAfterNotOK, 2)}},
			"afterok:1,singleton,afternotok:2"},
		{"AFTEROK:1", Dependency{Conditions: []DepCondition{c(DepAfterOK, 1)}}, "afterok:1"},
		{"aftercorr:9?afterburstbuffer:8", Dependency{Any: true, Conditions: []DepCondition{c(DepAfterCorr, 9), c(DepAfterBurstBuffer, 8)}},
			"aftercorr:9?afterburstbuffer:8"},
		{"afterok:1,afterok:2", Dependency{Conditions: []DepCondition{c(DepAfterOK, 1), c(DepAfterOK, 2)}}, "afterok:1:2"},
		{"afterok:4294967295", Dependency{Conditions: []DepCondition{c(DepAfterOK, 4294967295)}}, "afterok:4294967295"},
	}
	for _, tt := range tests {
		got, err := ParseDependency(tt.in)
		if err != nil || !reflect.DeepEqual(*got, tt.want) {
			t.Errorf("ParseDependency(%q) = %+v, %v; want %+v", tt.in, got, err, tt.want)
			continue
		}
		if s := got.String(); s != tt.text {
			t.Errorf("ParseDependency(%q).String() = %q; want %q", tt.in, s, tt.text)
		}
		if back, err := ParseDependency(tt.text); err != nil || !reflect.DeepEqual(back, got) {
			t.Errorf("ParseDependency(%q) = %+v, %v; want %+v", tt.text, back, err, got)
		}
	}
}

func TestParseDependencyRejects(t *testing.T) {
	for _, in := range []string{"", "afterok", "afterok:", "afterok:x", "afterok:1,afterany:2?after:3", "before:1", "singleton:1",
		"afterok:1+5", "afterok:0", "afterok:4294967296", "afterok:1_x", "after:1+x", "afterok::1", ",", "afterok:1,"} {
		_, err := ParseDependency(in)
		var se *SyntaxError
		if !errors.As(err, &se) || se.Value != in {
			t.Errorf("ParseDependency(%q) error = %v; want a SyntaxError naming the value", in, err)
		}
	}
}
