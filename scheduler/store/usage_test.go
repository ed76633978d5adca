package store

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/parityhpc/parity/scheduler/accounting"
	"github.com/parityhpc/parity/scheduler/policy"
)

// weekOfJobs replays Monday 2024-03-04 to the following Monday through a
// real ledger, billed by partition the way the controller will bill:
//   - alice (physics) runs one 1-GPU H100 job 09:00–10:00 every day;
//   - bob (physics) runs the same jobs on MI300X nodes, equal weights;
//   - carol (chem) runs a 24 h CPU job from Saturday 12:00, and a job that
//     failed after 2 h on Wednesday 00:00 and was requeued 03:00–04:00;
//   - dave (chem) started a job an hour before the end and is still running;
//   - erin's job never started; every GPU job also has a batch step.
func weekOfJobs(t *testing.T) []JobRecord {
	weights := func(s string) accounting.BillingWeights {
		w, err := accounting.ParseBillingWeights(s)
		if err != nil {
			t.Fatal(err)
		}
		return w
	}
	bill := accounting.BillingPolicy{Partitions: map[string]accounting.BillingWeights{
		"h100":  weights("CPU=0.25,Mem=0.0625G,GRES/gpu:h100=2"),
		"mi300": weights("CPU=0.25,Mem=0.0625G,GRES/gpu:mi300x=2"),
	}}
	at := func(d int, h float64) time.Time {
		return day0.AddDate(0, 0, d).Add(time.Duration(h * float64(time.Hour)))
	}
	var recs []JobRecord
	add := func(r JobRecord) {
		r.AllocTRES = bill.WithBilling(r.Partition, r.AllocTRES)
		recs = append(recs, r)
	}
	id := uint64(1)
	for d := range 7 {
		for _, u := range []struct{ user, part, gpu string }{{"alice", "h100", "gres/gpu:h100"}, {"bob", "mi300", "gres/gpu:mi300x"}} {
			r := job(id, u.user, "physics", at(d, 9), at(d, 10), "cpu=8,mem=64G,gres/gpu=1,"+u.gpu+"=1,node=1")
			r.Partition = u.part
			add(r)
			b := r
			b.Step = accounting.StepBatch
			add(b)
			id++
		}
	}
	cpu := func(r JobRecord) JobRecord { r.Partition = "cpu"; return r }
	add(cpu(job(500, "carol", "chem", at(5, 12), at(6, 12), "cpu=16,node=1")))
	failed := cpu(job(501, "carol", "chem", at(2, 0), at(2, 2), "cpu=16,node=1"))
	failed.State = accounting.StateNodeFail
	add(failed)
	requeued := cpu(job(501, "carol", "chem", at(2, 3), at(2, 4), "cpu=16,node=1"))
	requeued.Run = 1
	add(requeued)
	add(cpu(job(502, "dave", "chem", at(6, 23), time.Time{}, "cpu=4,node=1")))
	pending := cpu(job(503, "erin", "chem", time.Time{}, time.Time{}, "cpu=4"))
	pending.Start, pending.State, pending.Submit, pending.Eligible = time.Time{}, accounting.StatePending, at(6, 20), at(6, 20)
	add(pending)
	return recs
}

func TestWeekOfUsageDecaysAsHandComputed(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, Options{})
	recs := weekOfJobs(t)
	for _, r := range recs {
		if err := s.Record(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	now := day0.AddDate(0, 0, 7)
	cfg := accounting.DecayConfig{HalfLife: 24 * time.Hour}
	spans, err := s.Usage(ctx, cfg.Horizon(now), now)
	if err != nil {
		t.Fatal(err)
	}
	usage := accounting.DecayedUsage(spans, now, cfg)

	// Billing of each GPU job: 8 CPU × 0.25 + 64 GiB × 0.0625 + 1 GPU × 2 = 8.
	// With H = 1 day, a run of L seconds whose end is a seconds before now
	// contributes billing × (H/ln2) × 2^(−a/H) × (1 − 2^(−L/H)). Evaluated
	// by hand (python, float64) for:
	//   alice: Σ_{d=0..6} 8 over [d 09:00, d 10:00]                 = 37597.50618778338
	//   carol: 16 over [5 12:00, 6 12:00], [2 00:00, 2 02:00] (run 0)
	//          and [2 03:00, 2 04:00] (run 1)                          = 710817.9230712154
	//   dave:  4 over the last hour, still running                    = 14194.04336228552
	want := map[string]float64{
		"physics/alice": 37597.50618778338,
		"physics/bob":   37597.50618778338, // same work on AMD bills the same
		"chem/carol":    710817.9230712154,
		"chem/dave":     14194.04336228552,
	}
	if len(usage) != len(want) {
		t.Fatalf("usage has %d associations (%v), want %d: erin never started", len(usage), usage, len(want))
	}
	for k, v := range want {
		if math.Abs(usage[k]-v) > 1e-6*v {
			t.Errorf("decayed usage of %s = %.9f, hand-computed %.9f", k, usage[k], v)
		}
	}

	// Cross-check with the policy package's decay, accrued per minute as
	// the controller's calc period would: every minute of every run adds
	// billing × 60 s, decayed from that minute's middle to now.
	for key, v := range want {
		var accrued float64
		for _, sp := range spans {
			if accounting.UsageKey(sp.Account, sp.User) != key {
				continue
			}
			end := sp.End
			if end.IsZero() {
				end = now
			}
			for m := sp.Start; m.Before(end); m = m.Add(time.Minute) {
				accrued += policy.Decay(sp.Billing()*60, now.Sub(m.Add(30*time.Second)), cfg.HalfLife)
			}
		}
		if math.Abs(accrued-v) > 1e-6*v {
			t.Errorf("%s: per-minute accrual through policy.Decay = %.6f, closed form %.6f", key, accrued, v)
		}
	}

	// What the ledger says was consumed and what fair-share sees agree:
	// undecayed, usage is Σ billing × elapsed over the ledger's allocation
	// lines, and fair-share's account rows sum their users.
	raw := accounting.DecayedUsage(spans, now, accounting.DecayConfig{})
	ledger := map[string]float64{}
	lines, err := s.Query(ctx, Filter{AllocationsOnly: true, Duplicates: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range lines {
		ledger[accounting.UsageKey(l.Account, l.User)] += l.AllocTRES[accounting.TRESBilling] * l.Elapsed(now).Seconds()
	}
	for k, v := range map[string]float64{"physics/alice": 8 * 7 * 3600, "chem/carol": 16 * 27 * 3600, "chem/dave": 4 * 3600} {
		if raw[k] != v || ledger[k] != v {
			t.Errorf("%s: undecayed usage %v, ledger billing×elapsed %v, want %v", k, raw[k], ledger[k], v)
		}
	}
	tree, err := policy.NewAccountTree([]policy.Association{
		{Key: "physics"}, {Key: "chem"},
		{Key: "physics/alice", Parent: "physics", User: true}, {Key: "physics/bob", Parent: "physics", User: true},
		{Key: "chem/carol", Parent: "chem", User: true}, {Key: "chem/dave", Parent: "chem", User: true},
	})
	if err != nil {
		t.Fatal(err)
	}
	rows := policy.FairShares(tree, usage, policy.AlgoFairTree)
	byKey := map[string]policy.ShareRow{}
	for _, r := range rows {
		byKey[r.Key] = r
	}
	if got := byKey["physics"].RawUsage; math.Abs(got-2*37597.50618778338) > 1e-6 {
		t.Errorf("sshare RawUsage of physics = %v, want alice + bob", got)
	}
	if got := byKey[""].RawUsage; math.Abs(got-(2*37597.50618778338+710817.9230712154+14194.04336228552)) > 1e-6 {
		t.Errorf("root RawUsage = %v", got)
	}
	if byKey["physics/alice"].FairShare != byKey["physics/bob"].FairShare {
		t.Errorf("alice (NVIDIA) and bob (AMD) differ in fair-share: %v vs %v", byKey["physics/alice"].FairShare, byKey["physics/bob"].FairShare)
	}
}
