package userverbs

import (
	"os"
	"strings"
	"testing"
)

// partitionCase is one recorded scontrol run on the Slurm anchor.
type partitionCase struct {
	who, args, rc, stderr string
}

func recordedPartitionCases(t *testing.T) []partitionCase {
	t.Helper()
	b, err := os.ReadFile("../../../scheduler/controller/testdata/slurm2205_partition.txt")
	if err != nil {
		t.Fatal(err)
	}
	var out []partitionCase
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.Split(l, "|")
		if strings.HasPrefix(l, "#") || len(f) != 4 {
			continue
		}
		out = append(out, partitionCase{f[0], f[1], f[2], f[3]})
	}
	return out
}

// scontrol create|update|delete PartitionName=... answers the cases run
// on the Slurm 22.05 anchor as Slurm did: silent with status 0 on
// success; on a refusal status 1 and Slurm's first stderr line (Parity
// may say more after it). The partitions end as Slurm's show them.
func TestScontrolPartitionAdminAsSlurm2205(t *testing.T) {
	cl := startCLICluster(t)
	root, alice := cl.as("root", nil), cl.as("alice", nil)
	cases := recordedPartitionCases(t)
	if len(cases) < 15 {
		t.Fatalf("%d recorded cases, want at least 15", len(cases))
	}
	for _, c := range cases {
		// What the anchor held by then that the recorded lines do not
		// make: p4 (created there with OverSubscribe=FORCE:4, which
		// Parity refuses), p2's job, and p3, left by a failed create.
		switch c.args {
		case "update PartitionName=p4 OverSubscribe=MAYBE":
			cl.ok(root, "scontrol", "create", "PartitionName=p4", "Nodes=n1", "DenyAccounts=foo", "DenyQos=normal")
		case "delete PartitionName=p2":
			cl.ok(alice, "sbatch", "-p", "p2", "--hold", "--wrap", "true")
		case "delete PartitionName=p3":
			cl.ok(root, "scontrol", "create", "PartitionName=p3")
		}
		env := root
		if c.who != "root" {
			env = alice
		}
		out, errs, code := runCLI(env, append([]string{"scontrol"}, strings.Fields(c.args)...)...)
		first, _, _ := strings.Cut(c.stderr, " // ")
		got, _, _ := strings.Cut(errs, "\n")
		switch {
		case c.rc == "0" && (code != 0 || out != "" || errs != ""):
			t.Errorf("%s %s: exit %d, stdout %q, stderr %q; Slurm took it silently", c.who, c.args, code, out, errs)
		case c.rc == "1" && (code != 1 || !strings.HasPrefix(got, first)):
			t.Errorf("%s %s: exit %d, stderr %q; Slurm exited 1 with %q", c.who, c.args, code, errs, first)
		}
	}
	p2 := record(cl.ok(root, "scontrol", "show", "partition", "p2"))
	for k, v := range map[string]string{"AllowAccounts": "root_acct", "AllowQos": "normal", "DefaultTime": "00:10:00", "MaxTime": "02:00:00",
		"Nodes": "n[1-2]", "PriorityJobFactor": "5", "PriorityTier": "2", "OverSubscribe": "NO", "State": "DOWN", "Default": "NO"} {
		if p2[k] != v {
			t.Errorf("show partition p2: %s=%q, Slurm showed %q", k, p2[k], v)
		}
	}
	p4 := record(cl.ok(root, "scontrol", "show", "partition", "p4"))
	for k, v := range map[string]string{"DenyAccounts": "foo", "DenyQos": "normal", "MaxTime": "UNLIMITED", "Nodes": "n[1-2]", "State": "DRAIN"} {
		if p4[k] != v {
			t.Errorf("show partition p4: %s=%q, want %q", k, p4[k], v)
		}
	}
	if out := cl.ok(root, "sinfo", "-h", "-o", "%P"); strings.Contains(out, "p3") {
		t.Errorf("p3 deleted but sinfo lists it:\n%s", out)
	}
	// A drained partition takes no new job, in Slurm's words.
	cl.fails(alice, 1, []string{"sbatch", "-p", "p4", "--wrap", "true"}, "Required partition not available (inactive or drain)")
	// Default=YES makes it the default: a job naming no partition goes there.
	cl.ok(root, "scontrol", "update", "PartitionName=p2", "Default=YES")
	id := strings.TrimSpace(cl.ok(alice, "sbatch", "--parsable", "--hold", "--wrap", "true"))
	if j := record(cl.ok(alice, "scontrol", "show", "job", id)); j["Partition"] != "p2" {
		t.Errorf("after Default=YES on p2 a job went to %q", j["Partition"])
	}
}

// scontrol reconfigure by a user is refused in Slurm's words and status
// (recorded on the anchor: slurm2205_reconfigure.txt).
func TestScontrolReconfigureRefusedAsSlurm2205(t *testing.T) {
	cl := startCLICluster(t)
	alice := cl.as("alice", nil)
	b, err := os.ReadFile("../../../scheduler/controller/testdata/slurm2205_reconfigure.txt")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.Split(l, "|")
		if strings.HasPrefix(l, "#") || len(f) != 4 || f[0] != "tuser" {
			continue
		}
		_, errs, code := runCLI(alice, "scontrol", f[1])
		if got, _, _ := strings.Cut(errs, "\n"); code != 1 || !strings.HasPrefix(got, f[3]) {
			t.Errorf("scontrol %s as a user: exit %d, %q; Slurm exited 1 with %q", f[1], code, errs, f[3])
		}
		n++
	}
	if n < 2 {
		t.Fatalf("%d recorded refusals, want 2", n)
	}
}
