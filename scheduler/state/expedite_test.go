package state

import (
	"reflect"
	"testing"

	"github.com/parityhpc/parity/scheduler/core"
)

// TestAddAvoid: one entry per node, devices sorted and distinct, a whole
// node absorbing its devices either way round; FormatAvoid and ParseAvoid
// agree.
func TestAddAvoid(t *testing.T) {
	cases := []struct {
		have, more []core.NodeDevices
		want       string
	}{
		{nil, nil, ""},
		{nil, []core.NodeDevices{{Node: "n1", Devices: []string{"b", "a", "a"}}}, "n1:a+b"},
		{[]core.NodeDevices{{Node: "n1", Devices: []string{"a"}}}, []core.NodeDevices{{Node: "n1", Devices: []string{"c"}}, {Node: "n2"}}, "n1:a+c;n2"},
		{[]core.NodeDevices{{Node: "n1", Devices: []string{"a"}}}, []core.NodeDevices{{Node: "n1"}}, "n1"},
		{[]core.NodeDevices{{Node: "n1"}}, []core.NodeDevices{{Node: "n1", Devices: []string{"a"}}}, "n1"},
	}
	for _, c := range cases {
		got := addAvoid(c.have, c.more)
		if s := FormatAvoid(got); s != c.want {
			t.Errorf("addAvoid(%v, %v) = %q, want %q", c.have, c.more, s, c.want)
		}
		if back := ParseAvoid(FormatAvoid(got)); !reflect.DeepEqual(back, got) && len(got) > 0 {
			t.Errorf("ParseAvoid(%q) = %v, want %v", FormatAvoid(got), back, got)
		}
	}
}
