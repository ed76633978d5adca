package api

import (
	"errors"
	"fmt"
	"time"

	"github.com/parityhpc/parity/scheduler/accounting"
	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/policy"
)

// ErrInvalidAccounting is wrapped when an accounting message cannot be read.
var ErrInvalidAccounting = errors.New("api: invalid accounting message")

// AccountingFilterToProto is the wire form of an sacct filter.
func AccountingFilterToProto(f accounting.Filter) *pb.AccountingFilter {
	p := &pb.AccountingFilter{Users: f.Users, Accounts: f.Accounts, Partitions: f.Partitions, Qos: f.QOS, Names: f.Names,
		Start: Timestamp(f.Start), End: Timestamp(f.End), AllocationsOnly: f.AllocationsOnly, Duplicates: f.Duplicates}
	for _, s := range f.States {
		p.States = append(p.States, string(s))
	}
	for _, j := range f.Jobs {
		p.Jobs = append(p.Jobs, &pb.JobSelector{Id: j.ID, Task: j.Task, Step: j.Step, HasStep: j.HasStep})
	}
	return p
}

// AccountingFilterFromProto reads a filter from the wire; bad states and
// steps are errors naming the field and value.
func AccountingFilterFromProto(p *pb.AccountingFilter) (accounting.Filter, error) {
	f := accounting.Filter{Users: p.GetUsers(), Accounts: p.GetAccounts(), Partitions: p.GetPartitions(), QOS: p.GetQos(),
		Names: p.GetNames(), Start: Time(p.GetStart()), End: Time(p.GetEnd()), AllocationsOnly: p.GetAllocationsOnly(),
		Duplicates: p.GetDuplicates()}
	for _, s := range p.GetStates() {
		st := accounting.JobState(s)
		if !st.Valid() {
			return f, fmt.Errorf("%w: filter.states: %q is not a job state", ErrInvalidAccounting, s)
		}
		f.States = append(f.States, st)
	}
	for i, j := range p.GetJobs() {
		if j.GetId() == 0 || (j.GetHasStep() && !accounting.ValidStep(j.GetStep())) || j.GetTask() < -1 {
			return f, fmt.Errorf("%w: filter.jobs[%d]: id %d, task %d, step %q is not a job selector", ErrInvalidAccounting, i, j.GetId(), j.GetTask(), j.GetStep())
		}
		f.Jobs = append(f.Jobs, accounting.JobSelector{ID: j.GetId(), Task: j.GetTask(), Step: j.GetStep(), HasStep: j.GetHasStep()})
	}
	return f, nil
}

// LedgerLineToProto is the wire form of one ledger line.
func LedgerLineToProto(r *accounting.JobRecord) *pb.LedgerLine {
	return &pb.LedgerLine{JobId: r.JobID, ArrayJobId: r.ArrayJobID, ArrayTaskId: r.ArrayTaskID, Run: int32(r.Run), Step: r.Step,
		Name: r.Name, User: r.User, Account: r.Account, Partition: r.Partition, Qos: r.QOS,
		Submit: Timestamp(r.Submit), Eligible: Timestamp(r.Eligible), Start: Timestamp(r.Start), End: Timestamp(r.End),
		State: string(r.State), CancelledBy: r.CancelledBy, ExitCode: int32(r.ExitCode), ExitSignal: int32(r.ExitSignal),
		Nodelist: r.NodeList, Nnodes: int32(r.NNodes), TimelimitSeconds: int64(r.Timelimit / time.Second),
		ReqTres: r.ReqTRES.String(), AllocTres: r.AllocTRES.String(), GpuUuids: r.GPUUUIDs,
		CpuTimeMs: r.Usage.CPUTime.Milliseconds(), MaxRssMib: r.Usage.MaxRSSMiB, GpuUtilMean: r.Usage.GPUUtilMean,
		GpuUtilMax: r.Usage.GPUUtilMax, GpuMemMaxMib: r.Usage.GPUMemMaxMiB, StartDecision: r.StartDecision, EndDecision: r.EndDecision,
		DerivedExitCode: int32(r.DerivedExitCode), DerivedSignal: int32(r.DerivedSignal)}
}

// LedgerLineFromProto reads a ledger line from the wire.
func LedgerLineFromProto(p *pb.LedgerLine) (accounting.JobRecord, error) {
	r := accounting.JobRecord{JobID: p.GetJobId(), ArrayJobID: p.GetArrayJobId(), ArrayTaskID: p.GetArrayTaskId(), Run: int(p.GetRun()),
		Step: p.GetStep(), Name: p.GetName(), User: p.GetUser(), Account: p.GetAccount(), Partition: p.GetPartition(), QOS: p.GetQos(),
		Submit: Time(p.GetSubmit()), Eligible: Time(p.GetEligible()), Start: Time(p.GetStart()), End: Time(p.GetEnd()),
		State: accounting.JobState(p.GetState()), CancelledBy: p.GetCancelledBy(), ExitCode: int(p.GetExitCode()),
		ExitSignal: int(p.GetExitSignal()), NodeList: p.GetNodelist(), NNodes: int(p.GetNnodes()),
		Timelimit: time.Duration(p.GetTimelimitSeconds()) * time.Second, GPUUUIDs: p.GetGpuUuids(),
		Usage: accounting.JobUsage{CPUTime: time.Duration(p.GetCpuTimeMs()) * time.Millisecond, MaxRSSMiB: p.GetMaxRssMib(),
			GPUUtilMean: p.GetGpuUtilMean(), GPUUtilMax: p.GetGpuUtilMax(), GPUMemMaxMiB: p.GetGpuMemMaxMib()},
		StartDecision: p.GetStartDecision(), EndDecision: p.GetEndDecision(),
		DerivedExitCode: int(p.GetDerivedExitCode()), DerivedSignal: int(p.GetDerivedSignal())}
	var err error
	if r.ReqTRES, err = accounting.ParseTRES(p.GetReqTres()); err != nil {
		return r, fmt.Errorf("%w: job %d req_tres: %w", ErrInvalidAccounting, r.JobID, err)
	}
	if r.AllocTRES, err = accounting.ParseTRES(p.GetAllocTres()); err != nil {
		return r, fmt.Errorf("%w: job %d alloc_tres: %w", ErrInvalidAccounting, r.JobID, err)
	}
	return r, nil
}

// SharesToProto is the wire form of an account tree's fair-share rows.
func SharesToProto(assocs []policy.Association, rows []policy.ShareRow) ([]*pb.ShareAssociation, []*pb.ShareRow) {
	pa := make([]*pb.ShareAssociation, len(assocs))
	for i, a := range assocs {
		pa[i] = &pb.ShareAssociation{Key: a.Key, Parent: a.Parent, Shares: a.Shares, User: a.User, ZeroShares: a.ZeroShares,
			SharesParent: a.SharesParent}
	}
	pr := make([]*pb.ShareRow, len(rows))
	for i, r := range rows {
		pr[i] = &pb.ShareRow{Key: r.Key, Depth: int32(r.Depth), User: r.User, RawShares: r.RawShares, SharesParent: r.SharesParent,
			NormShares: r.NormShares, RawUsage: r.RawUsage, NormUsage: r.NormUsage, EffectvUsage: r.EffectvUsage,
			FairShare: r.FairShare, LevelFs: r.LevelFS}
	}
	return pa, pr
}

// SharesFromProto reads the account tree and fair-share rows back.
func SharesFromProto(pa []*pb.ShareAssociation, pr []*pb.ShareRow) ([]policy.Association, []policy.ShareRow) {
	assocs := make([]policy.Association, len(pa))
	for i, a := range pa {
		assocs[i] = policy.Association{Key: a.GetKey(), Parent: a.GetParent(), Shares: a.GetShares(), User: a.GetUser(),
			ZeroShares: a.GetZeroShares(), SharesParent: a.GetSharesParent()}
	}
	rows := make([]policy.ShareRow, len(pr))
	for i, r := range pr {
		rows[i] = policy.ShareRow{Key: r.GetKey(), Depth: int(r.GetDepth()), User: r.GetUser(), RawShares: r.GetRawShares(),
			SharesParent: r.GetSharesParent(), NormShares: r.GetNormShares(), RawUsage: r.GetRawUsage(), NormUsage: r.GetNormUsage(),
			EffectvUsage: r.GetEffectvUsage(), FairShare: r.GetFairShare(), LevelFS: r.GetLevelFs()}
	}
	return assocs, rows
}
