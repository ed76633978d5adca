package api

import (
	"errors"
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/parityhpc/parity/scheduler/accounting"
	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/policy"
)

func TestLedgerLineRoundTrip(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		rec  accounting.JobRecord
	}{
		{"full", accounting.JobRecord{JobID: 7, ArrayJobID: 5, ArrayTaskID: 2, Run: 1, Step: "batch", Name: "train", User: "alice",
			Account: "physics", Partition: "gpu", QOS: "normal", Submit: t0, Eligible: t0, Start: t0.Add(time.Minute),
			End: t0.Add(time.Hour), State: accounting.StateCompleted, ExitCode: 3, ExitSignal: 9, DerivedExitCode: 4, DerivedSignal: 11, NodeList: "n[1-2]", NNodes: 2,
			Timelimit: 2 * time.Hour, ReqTRES: accounting.TRES{"cpu": 8, "gres/gpu": 2},
			AllocTRES: accounting.TRES{"billing": 22, "cpu": 8, "gres/gpu": 2, "gres/gpu:h100": 2, "mem": 8192, "node": 2},
			GPUUUIDs:  []string{"GPU-a", "GPU-b"}, Usage: accounting.JobUsage{CPUTime: 90500 * time.Millisecond, MaxRSSMiB: 300.5,
				GPUUtilMean: 70, GPUUtilMax: 100, GPUMemMaxMiB: 2000}, StartDecision: "3", EndDecision: "9"}},
		{"pending, nothing known", accounting.JobRecord{JobID: 1, User: "bob", State: accounting.StatePending,
			ReqTRES: accounting.TRES{"cpu": 1}, AllocTRES: accounting.TRES{}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := LedgerLineFromProto(LedgerLineToProto(&tc.rec))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.rec) {
				t.Errorf("round trip\n got %+v\nwant %+v", got, tc.rec)
			}
		})
	}
	if _, err := LedgerLineFromProto(&pb.LedgerLine{JobId: 1, AllocTres: "cpu=x"}); !errors.Is(err, ErrInvalidAccounting) {
		t.Errorf("bad alloc_tres: %v", err)
	}
}

func TestAccountingFilterRoundTrip(t *testing.T) {
	f := accounting.Filter{Users: []string{"alice"}, Accounts: []string{"physics"}, States: []accounting.JobState{accounting.StateFailed},
		Jobs:  []accounting.JobSelector{{ID: 4, Task: -1}, {ID: 5, Task: 2, Step: "batch", HasStep: true}},
		Start: time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC), AllocationsOnly: true, Duplicates: true}
	got, err := AccountingFilterFromProto(AccountingFilterToProto(f))
	if err != nil || !reflect.DeepEqual(got, f) {
		t.Fatalf("round trip %+v, %v; want %+v", got, err, f)
	}
	bad := []*pb.AccountingFilter{
		{States: []string{"DONE"}},
		{Jobs: []*pb.JobSelector{{Id: 0, Task: -1}}},
		{Jobs: []*pb.JobSelector{{Id: 3, Task: -1, Step: "x", HasStep: true}}},
	}
	for _, p := range bad {
		if _, err := AccountingFilterFromProto(p); !errors.Is(err, ErrInvalidAccounting) {
			t.Errorf("%v accepted: %v", p, err)
		}
	}
}

func TestSharesRoundTrip(t *testing.T) {
	assocs := []policy.Association{{Key: "physics", Shares: 40}, {Key: "physics/alice", Parent: "physics", User: true, SharesParent: true}}
	rows := []policy.ShareRow{{Key: "", NormShares: 1, LevelFS: 1}, {Key: "physics/alice", Depth: 2, User: true, LevelFS: math.Inf(1)}}
	a, r := SharesFromProto(SharesToProto(assocs, rows))
	if !reflect.DeepEqual(a, assocs) || !reflect.DeepEqual(r, rows) {
		t.Errorf("round trip %+v %+v", a, r)
	}
}
