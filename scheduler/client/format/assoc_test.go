package format

import (
	"strings"
	"testing"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
)

// TestAccountQOSShown checks the Account and QOS scontrol show job -o
// and squeue %a|%q print, as Slurm 22.05 prints them on the anchor: with
// accounting_storage/none a defaulted account and every QOS are (null)
// and an asked-for account is kept; with slurmdbd the job's resolved
// account and QOS (normal by default) are shown.
func TestAccountQOSShown(t *testing.T) {
	l, err := ParseSqueueFormat("%a|%q")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name        string
		spec        *pb.JobSpec
		acct, qos   string
		wantAccount string
		wantQOS     string
	}{
		// The controller charges "default"/"normal" internally but keeps
		// the spec as submitted on a cluster without accounts or QOS.
		{"no accounting, defaulted", &pb.JobSpec{}, "default", "normal", "(null)", "(null)"},
		{"no accounting, --account=foo --qos ignored", &pb.JobSpec{Account: "foo"}, "foo", "normal", "foo", "(null)"},
		{"accounting, defaulted", &pb.JobSpec{Account: "root", Qos: "normal"}, "root", "normal", "root", "normal"},
		{"accounting, asked for", &pb.JobSpec{Account: "physics", Qos: "high"}, "physics", "high", "physics", "high"},
		{"no spec", nil, "physics", "high", "physics", "high"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			j := &pb.Job{Id: 5, User: "root", State: "PENDING", Partition: "gpu", Account: c.acct, Qos: c.qos, Spec: c.spec}
			var b strings.Builder
			if err := ShowJobs(&b, []*pb.Job{j}, ShowOptions{Env: env, OneLiner: true}); err != nil {
				t.Fatal(err)
			}
			rec := pairs(t, b.String(), true)[0]
			if rec["Account"] != c.wantAccount || rec["QOS"] != c.wantQOS {
				t.Errorf("scontrol Account=%s QOS=%s, want Account=%s QOS=%s", rec["Account"], rec["QOS"], c.wantAccount, c.wantQOS)
			}
			b.Reset()
			if err := Squeue(&b, []*pb.Job{j}, l, SqueueOptions{Env: env, NoHeader: true}); err != nil {
				t.Fatal(err)
			}
			mustEqual(t, "squeue %a|%q", strings.TrimSuffix(b.String(), "\n"), c.wantAccount+"|"+c.wantQOS)
		})
	}
}
