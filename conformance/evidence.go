package conformance

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/parityhpc/parity/reports"
	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/client"
)

// envDump is the first line of every spec job's script: the shell's own
// `export -p` (a builtin, so no process and no descriptor survives it)
// writes the environment the job started with beside its output (the
// work directory is its current directory), so a
// failing result shows what the job saw without a rerun.
const envDump = `export -p > "conform-$SLURM_JOB_ID.env" 2>/dev/null || :`

// Evidence limits: enough to read a failure, small enough for a report
// that holds hundreds of results.
const (
	evidenceScriptMax = 1500
	evidenceEnvMax    = 4000
	evidenceOutputMax = 2000
	evidenceDecisions = 40
)

// jobEvidence is what a failing result shows of each of the spec's jobs:
// its record and output, the command that submitted it, the environment
// it started with, and the decision-log records that name it.
func (e *Env) jobEvidence() []reports.Evidence {
	e.rec.mu.Lock()
	ids := append([]uint64(nil), e.rec.jobs...)
	e.rec.mu.Unlock()
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	ids = compactIDs(ids)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	work, werr := e.Target.WorkDir()
	var out []reports.Evidence
	for _, id := range ids {
		j, err := e.Admin.GetJob(ctx, id, true)
		text := describeJob(j)
		if err != nil {
			text = fmt.Sprintf("job %d: %s", id, client.Message(err))
		}
		if werr == nil {
			if b, err := os.ReadFile(filepath.Join(work, fmt.Sprintf("conform-%d.out", id))); err == nil && len(b) > 0 {
				text += "\n--- output ---\n" + truncateText(string(b), evidenceOutputMax)
			}
		}
		out = append(out, reports.Evidence{Kind: "job", Text: text})
		if spec := j.GetSpec(); spec != nil {
			out = append(out, commandEvidence(id, spec))
		}
		if werr == nil {
			if b, err := os.ReadFile(filepath.Join(work, fmt.Sprintf("conform-%d.env", id))); err == nil && len(b) > 0 {
				out = append(out, reports.Evidence{Kind: "env", Text: fmt.Sprintf("job %d started with:\n%s", id, truncateText(string(b), evidenceEnvMax))})
			}
		}
		out = append(out, e.decisionEvidence(ctx, id))
	}
	return out
}

func compactIDs(ids []uint64) []uint64 {
	out := ids[:0]
	for i, id := range ids {
		if i == 0 || id != ids[i-1] {
			out = append(out, id)
		}
	}
	return out
}

// commandEvidence writes the job's request as the sbatch line it amounts
// to, with its script.
func commandEvidence(id uint64, s *pb.JobSpec) reports.Evidence {
	args := []string{"sbatch"}
	add := func(flag string, v any, set bool) {
		if set {
			args = append(args, fmt.Sprintf("%s=%v", flag, v))
		}
	}
	add("--job-name", s.GetName(), s.GetName() != "")
	add("--partition", s.GetPartition(), s.GetPartition() != "")
	add("--account", s.GetAccount(), s.GetAccount() != "")
	add("--constraint", s.GetConstraint(), s.GetConstraint() != "")
	add("--nodes", s.GetNodes(), s.GetNodes() > 0)
	add("--ntasks", s.GetNtasks(), s.GetNtasks() > 0)
	add("--ntasks-per-node", s.GetNtasksPerNode(), s.GetNtasksPerNode() > 0)
	add("--cpus-per-task", s.GetCpusPerTask(), s.GetCpusPerTask() > 0)
	add("--mem", fmt.Sprintf("%dM", s.GetMemPerNodeMb()), s.GetMemPerNodeMb() > 0)
	add("--gres", s.GetGresOption(), s.GetGresOption() != "")
	add("--nodelist", strings.Join(s.GetNodelist(), ","), len(s.GetNodelist()) > 0)
	add("--time", fmt.Sprintf("%ds", s.GetTimeLimitSeconds()), s.GetTimeLimitSeconds() > 0)
	if s.GetExclusive() {
		args = append(args, "--exclusive")
	}
	if s.GetRequeue() {
		args = append(args, "--requeue")
	}
	text := fmt.Sprintf("job %d was submitted as: %s", id, strings.Join(args, " "))
	if sc := s.GetScript(); sc != "" {
		text += "\n--- script ---\n" + truncateText(sc, evidenceScriptMax)
	}
	return reports.Evidence{Kind: "command", Text: text}
}

// decisionEvidence lists the decision-log records that name the job,
// oldest first: why it waited, where it was placed, what ended it.
func (e *Env) decisionEvidence(ctx context.Context, id uint64) reports.Evidence {
	evs, err := e.Admin.Events(ctx, &pb.EventsRequest{JobId: id})
	if err != nil {
		return reports.Evidence{Kind: "decisions", Text: fmt.Sprintf("job %d: the decision log could not be read: %s", id, client.Message(err))}
	}
	if len(evs) > evidenceDecisions {
		evs = evs[len(evs)-evidenceDecisions:]
	}
	lines := make([]string, 0, len(evs)+1)
	lines = append(lines, fmt.Sprintf("job %d: %d decision-log records", id, len(evs)))
	for _, ev := range evs {
		lines = append(lines, formatDecision(ev))
	}
	return reports.Evidence{Kind: "decisions", Text: strings.Join(lines, "\n")}
}

func formatDecision(ev *pb.Event) string {
	parts := []string{ev.GetTime().AsTime().UTC().Format("15:04:05.000"), ev.GetKind()}
	for _, kv := range [][2]string{{"actor", ev.GetActor()}, {"node", ev.GetNode()}, {"reason", ev.GetReason()},
		{"detail", ev.GetDetail()}, {"verdict", ev.GetVerdict()}, {"nodes", strings.Join(ev.GetNodes(), ",")}} {
		if kv[1] != "" {
			parts = append(parts, kv[0]+"="+kv[1])
		}
	}
	return strings.Join(parts, " ")
}
