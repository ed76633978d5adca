package core

import (
	"testing"
	"time"

	"github.com/parityhpc/parity/topology"
)

// A partition's AllowAccounts/DenyAccounts and AllowQos/DenyQos keep
// other jobs pending with the reasons Slurm 22.05 gave on the anchor
// (scheduler/controller/testdata/slurm2205_partition.txt); jobs they
// allow start.
func TestPartitionAccessLists(t *testing.T) {
	tests := []struct {
		name string
		mod  func(p *Partition)
		want Reason // "": it starts
	}{
		{"no lists", func(*Partition) {}, ""},
		{"account allowed", func(p *Partition) { p.AllowAccounts = []string{"bio", "physics"} }, ""},
		{"account not allowed", func(p *Partition) { p.AllowAccounts = []string{"root_acct"} },
			"Job's account not permitted to use this partition (gpu allows root_acct not physics)"},
		{"account denied", func(p *Partition) { p.DenyAccounts = []string{"physics", "foo"} },
			"Job's account not permitted to use this partition (gpu denies physics,foo including physics)"},
		{"QOS not allowed", func(p *Partition) { p.AllowQOS = []string{"high"} },
			"Job's QOS not permitted to use this partition (gpu allows high not normal)"},
		{"QOS denied", func(p *Partition) { p.DenyQOS = []string{"normal"} },
			"Job's QOS not permitted to use this partition (gpu denies normal including normal)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			snap := snapshot(gpuNode(t, "n1", "h100"))
			snap.QOS = []QOS{{Name: "normal"}}
			tc.mod(&snap.Partitions[0])
			j := job(1, 1, 1, "h100", time.Hour)
			j.QOS = "normal"
			snap.Jobs = []Job{j}
			p := Schedule(snap, DefaultConfig(), t0)
			if tc.want == "" {
				mustStart(t, p, 1)
				return
			}
			if d := decision(t, p, 1); d.Reason != tc.want {
				t.Fatalf("reason %q, want %q", d.Reason, tc.want)
			}
		})
	}
}

// OverSubscribe=EXCLUSIVE gives each job whole nodes: with every node
// partly busy, a one-GPU job waits where it would otherwise start.
func TestPartitionExclusive(t *testing.T) {
	for _, exclusive := range []bool{false, true} {
		snap := snapshot(gpuNode(t, "n1", "h100"), gpuNode(t, "n2", "h100"))
		snap.Partitions[0].Exclusive = exclusive
		later := t0.Add(2 * time.Hour)
		snap.Jobs = []Job{busy(90, "n1", []int{0}, topology.NewCPUSet(0), 0, later), busy(91, "n2", []int{0}, topology.NewCPUSet(0), 0, later),
			job(1, 1, 1, "h100", time.Hour)}
		p := Schedule(snap, DefaultConfig(), t0)
		started := len(p.Starts) == 1
		if started == exclusive {
			d, _ := p.Decision(1)
			t.Errorf("exclusive=%v: started=%v (%s %s)", exclusive, started, d.Reason, d.Detail)
		}
	}
}
