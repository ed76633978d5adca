package topology

import (
	"errors"
	"reflect"
	"testing"
)

func TestExpandHostlist(t *testing.T) {
	tests := []struct {
		in      string
		want    []string
		wantErr bool
	}{
		{in: "n1", want: []string{"n1"}},
		{in: "n[1-3]", want: []string{"n1", "n2", "n3"}},
		{in: "n[08-10]", want: []string{"n08", "n09", "n10"}},
		{in: "n[8-10]", want: []string{"n8", "n9", "n10"}},
		{in: "node[01-02,5],gpu-a[1-2]", want: []string{"node01", "node02", "node5", "gpu-a1", "gpu-a2"}},
		{in: "rack[0-1]_blade[0-1]", want: []string{"rack0_blade0", "rack0_blade1", "rack1_blade0", "rack1_blade1"}},
		{in: "", want: nil},
		{in: "n[3-1]", wantErr: true},
		{in: "n[1-", wantErr: true},
		{in: "n1]", wantErr: true},
		{in: "n[a-b]", wantErr: true},
		{in: "n[-1]", wantErr: true},
		{in: "n[+1-2]", wantErr: true},
		{in: "n[0-70000]", wantErr: true},
	}
	for _, tc := range tests {
		got, err := ExpandHostlist(tc.in)
		if (err != nil) != tc.wantErr {
			t.Errorf("ExpandHostlist(%q) error = %v, want error %v", tc.in, err, tc.wantErr)
			continue
		}
		if !tc.wantErr && !reflect.DeepEqual(got, tc.want) {
			t.Errorf("ExpandHostlist(%q) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

const sampleTopology = `
# two leaves under one spine
SwitchName=s1 Nodes=n[1-4]
SwitchName=s2 Nodes=n[5-8] LinkSpeed=100
SwitchName=spine Switches=s[1-2]
`

func TestParseTopologyConf(t *testing.T) {
	tree, err := ParseTopologyConf(sampleTopology)
	if err != nil {
		t.Fatal(err)
	}
	if tree.Len() != 3 {
		t.Fatalf("Len() = %d, want 3", tree.Len())
	}
	spine, ok := tree.Index("spine")
	if !ok {
		t.Fatal("spine missing")
	}
	if got := tree.Switch(spine).Level; got != 1 {
		t.Errorf("spine level = %d, want 1", got)
	}
	if got := tree.Leaves(spine); !reflect.DeepEqual(got, []int{0, 1}) {
		t.Errorf("Leaves(spine) = %v, want [0 1]", got)
	}
	leaf, ok := tree.LeafOf("n6")
	if !ok || tree.Switch(leaf).Name != "s2" {
		t.Errorf("LeafOf(n6) = %d %v, want s2", leaf, ok)
	}
	if tree.Switch(leaf).Parent != spine {
		t.Errorf("s2 parent = %d, want %d", tree.Switch(leaf).Parent, spine)
	}
	if got := tree.LeafSpan([]string{"n1", "n2", "n5", "x"}); got != 3 {
		t.Errorf("LeafSpan = %d, want 3 (s1, s2, one outside)", got)
	}
}

func TestParseTopologyConfErrors(t *testing.T) {
	tests := []struct{ name, text string }{
		{"no key=value", "SwitchName=s1 n1"},
		{"unknown key", "SwitchName=s1 Ports=4"},
		{"missing name", "Nodes=n1"},
		{"duplicate switch", "SwitchName=s1 Nodes=n1\nSwitchName=s1 Nodes=n2"},
		{"node on two leaves", "SwitchName=s1 Nodes=n1\nSwitchName=s2 Nodes=n1"},
		{"unknown child", "SwitchName=top Switches=s9"},
		{"two parents", "SwitchName=s1 Nodes=n1\nSwitchName=a Switches=s1\nSwitchName=b Switches=s1"},
		{"cycle", "SwitchName=a Switches=b\nSwitchName=b Switches=a"},
		{"self", "SwitchName=a Switches=a"},
		{"nodes and switches", "SwitchName=s1 Nodes=n1\nSwitchName=a Nodes=n2 Switches=s1"},
		{"bad hostlist", "SwitchName=s1 Nodes=n[2-1]"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseTopologyConf(tc.text)
			if !errors.Is(err, ErrSwitchTree) {
				t.Errorf("error = %v, want ErrSwitchTree", err)
			}
		})
	}
}
