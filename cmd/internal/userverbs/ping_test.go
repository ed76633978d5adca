package userverbs

import (
	"net"
	"os"
	"strings"
	"testing"
)

// pingCase is one scontrol ping recorded on the Slurm anchor: its hosts
// in SlurmctldHost order (":down" for one that does not answer) and what
// Slurm printed.
type pingCase struct {
	hosts []string
	out   string
}

func recordedPings(t *testing.T) []pingCase {
	t.Helper()
	b, err := os.ReadFile("testdata/slurm2205_ping.txt")
	if err != nil {
		t.Fatal(err)
	}
	var out []pingCase
	for _, block := range strings.Split(string(b), "== ")[1:] {
		head, body, _ := strings.Cut(block, "\n")
		body, _, _ = strings.Cut(body, "rc=")
		out = append(out, pingCase{hosts: strings.Fields(head), out: body})
	}
	return out
}

// scontrol ping over the controllers' list prints what Slurm printed for
// the same up and down controllers, line for line, and exits 0.
func TestScontrolPingAsSlurm2205(t *testing.T) {
	cl := startCLICluster(t)
	up := cl.c.Addr()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := l.Addr().String() // nothing listens once closed: refused at once
	l.Close()
	cases := recordedPings(t)
	if len(cases) != 3 {
		t.Fatalf("%d recorded pings, want 3", len(cases))
	}
	for _, c := range cases {
		var addrs []string
		names := map[string]string{}
		for i, h := range c.hosts {
			name, isDown := strings.CutSuffix(h, ":down")
			a := up
			if isDown {
				// Each down one its own address, so names map back.
				a = strings.Replace(dead, "127.0.0.1", "127.0.0."+string(rune('1'+i)), 1)
			}
			addrs, names[a] = append(addrs, a), name
		}
		env := cl.as("alice", map[string]string{"PARITY_CONTROLLER": strings.Join(addrs, ",")})
		out, errs, code := runCLI(env, "scontrol", "ping")
		for a, name := range names {
			out = strings.ReplaceAll(out, " at "+a+" ", " at "+name+" ")
		}
		if code != 0 || out != c.out {
			t.Errorf("scontrol ping with %v: exit %d, stdout\n%s\nstderr %q; Slurm printed\n%s", c.hosts, code, out, errs, c.out)
		}
	}
	if _, errs, code := runCLI(cl.as("alice", nil), "scontrol", "ping", "extra"); code != 1 || !strings.HasPrefix(errs, "too many arguments for keyword:ping") {
		t.Errorf("scontrol ping extra: exit %d, %q; Slurm exits 1 with too many arguments for keyword:ping", code, errs)
	}
}
