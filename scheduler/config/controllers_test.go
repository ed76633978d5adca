package config

import (
	"os"
	"reflect"
	"strings"
	"testing"
)

func TestControllersList(t *testing.T) {
	base, err := os.ReadFile("testdata/minimal.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, list string
		want       []string
		err        string
	}{
		{name: "three", list: "[c1:6817, c2:6817, c3:6817]", want: []string{"c1:6817", "c2:6817", "c3:6817"}},
		{name: "none", list: "[]"},
		{name: "no port", list: "[c1]", err: `controllers[0]: "c1" is not host:port`},
		{name: "bad port", list: "[c1:http]", err: `controllers[0]: "c1:http": port "http" is not a number`},
		{name: "repeated", list: "[c1:6817, c1:6817]", err: `controllers[1]: "c1:6817" is listed twice`},
		{name: "too many", list: "[a:1, b:1, c:1, d:1, e:1, f:1, g:1, h:1]", err: "8 controllers listed; at most 7"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Parse("cluster.yaml", append(append([]byte(nil), base...), []byte("\ncontrollers: "+tc.list+"\n")...))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want one naming %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(c.Controller.Peers, tc.want) && (len(tc.want) > 0 || len(c.Controller.Peers) > 0) {
				t.Fatalf("peers %v, want %v", c.Controller.Peers, tc.want)
			}
		})
	}
}
