package compat

import (
	"context"
	"strings"
)

// The sacct states: jobs that ran and ended (completed, failed, with GPUs,
// an array, one cancelled while it ran), recorded with sacct on the
// accounting anchor (../shared/tools/slurm-anchor/up-accounting.sh),
// whose slurmdbd keeps them, and on a lab whose controller keeps its
// ledger.

// sacctJobs names the states' jobs: every sacct invocation asks for them
// by name, so jobs of others on the shared anchor stay out.
const sacctJobs = "st-ok,st-fail,st-gpu,st-arr,st-cancel"

// sacctSince bounds the invocations to the recording's own jobs (an
// earlier recording's jobs of the same names ended before it).
const sacctSince = "now-2minutes"

// wrap is an sbatch step running cmd (--wrap) with 1000 MB.
func wrap(cmd string, args ...string) []string {
	return append(append([]string{"sbatch", "--parsable", "-o", "/dev/null", "--mem=1000"}, args...), "--wrap", cmd)
}

// sacctAllocations is how many allocation lines sacct -X prints for the
// states' jobs (the array's two tasks each).
const sacctAllocations = 6

// SacctStates are built one after the other as States are.
var SacctStates = []State{
	// Four jobs end at once; st-cancel runs on.
	{Name: "started", Running: 1, Steps: [][]string{
		wrap("true", "-J", "st-ok", "-t", "5"),
		wrap("exit 3", "-J", "st-fail", "-t", "5"),
		wrap("true", "-J", "st-gpu", "-t", "5", "-G", "2", "-c", "2"),
		wrap("true", "-J", "st-arr", "-t", "5", "--array=1-2"),
		wrap("sleep 300", "-J", "st-cancel", "-t", "5"),
	}, Accounted: accountedEnded(sacctAllocations - 1)},
	{Name: "ended", Steps: [][]string{
		{"scancel", "--name=st-cancel"},
	}, Accounted: accountedEnded(sacctAllocations)},
}

// accountedEnded waits until sacct shows n of the states' allocations
// ended.
func accountedEnded(n int) func(ctx context.Context, s Side, dir string) bool {
	return func(ctx context.Context, s Side, dir string) bool {
		o, _, code := s.Run(ctx, dir, nil, "sacct", "-X", "-n", "-P", "--name="+sacctJobs, "-S", sacctSince, "-o", "State")
		if code != 0 {
			return false
		}
		ended := 0
		for _, l := range strings.Split(strings.TrimSpace(o), "\n") {
			switch st, _, _ := strings.Cut(strings.TrimSpace(l), " "); st {
			case "", "PENDING", "RUNNING", "COMPLETING", "REQUEUED", "SUSPENDED":
			default:
				ended++
			}
		}
		return ended == n
	}
}

func sacct(args ...string) []string {
	return append([]string{"sacct", "--name=" + sacctJobs, "-S", sacctSince}, args...)
}

// SacctInvocations are the sacct command lines recorded per state.
var SacctInvocations = []Invocation{
	{"sacct", sacct()},
	{"sacct -X", sacct("-X")},
	{"sacct -X -P -o", sacct("-X", "-P", "-o", "JobID,JobName,Partition,Account,AllocCPUS,State,ExitCode,AllocTRES,ReqTRES,NNodes,Timelimit,User")},
	{"sacct -p -o", sacct("-p", "-o", "JobID,JobName,State,ExitCode,DerivedExitCode,NodeList")},
	// With -s, sacct's window ends where it starts unless -E is given:
	// the anchor lists none here.
	{"sacct -X -s CD,F", sacct("-X", "-s", "CD,F", "-o", "JobID,JobName,State,ExitCode")},
	{"sacct -X -s CD,F -E now", sacct("-X", "-s", "CD,F", "-E", "now", "-o", "JobID,JobName,State,ExitCode")},
	{"sacct -X -s CA,R -E now", sacct("-X", "-s", "CA,R", "-E", "now", "-P", "-o", "JobID,State")},
	{"sacct -b", sacct("-b")},
	{"sacct -X -o widths", sacct("-X", "-o", "JobID%15,JobName%-12,State%20,Elapsed")},
}

// SacctPath is the committed recording of the sacct states on the
// accounting anchor.
const SacctPath = "testdata/sacct.jsonl"

// SacctDifferencesPath lists the documented differences of the sacct
// states.
const SacctDifferencesPath = "testdata/sacctdifferences.txt"
