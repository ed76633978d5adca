package main

import (
	"reflect"
	"testing"
)

func TestMultiCallArgs(t *testing.T) {
	tests := []struct {
		args []string
		want []string
	}{
		{[]string{"/usr/bin/parity", "devices"}, []string{"devices"}},
		{[]string{"/usr/local/bin/sacct", "-u", "alice"}, []string{"acct", "-u", "alice"}},
		{[]string{"sshare"}, []string{"share"}},
		{[]string{"./sreport", "cluster-utilization"}, []string{"report", "cluster-utilization"}},
		{[]string{"parity"}, []string{}},
		{nil, nil},
	}
	for _, tt := range tests {
		got := multiCallArgs(tt.args)
		if len(got) == 0 && len(tt.want) == 0 {
			continue
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("multiCallArgs(%q) = %q, want %q", tt.args, got, tt.want)
		}
	}
}

func TestEveryVerbHasHelp(t *testing.T) {
	root := newRootCmd(nil, nil)
	for _, c := range root.Commands() {
		if c.Short == "" {
			t.Errorf("verb %q has no short help", c.Name())
		}
	}
}
