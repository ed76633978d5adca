package controller

import (
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/config"
)

// checkSpecText applies checkText to every user-supplied string of a job
// that is stored and shown (squeue, scontrol, sacct, the decision log),
// each with its bound: names, paths, expressions. The environment and
// the script's arguments reach only the job's processes, where a newline
// is legitimate; only a NUL, which exec cannot pass, is refused there.
func checkSpecText(s *pb.JobSpec, l config.JobLimits) error {
	name := nameLimit(l)
	type field struct {
		opt   string
		v     string
		limit int
	}
	fields := []field{
		{"--job-name", s.GetName(), name}, {"--account", s.GetAccount(), name}, {"--partition", s.GetPartition(), name},
		{"--qos", s.GetQos(), name}, {"--reservation", s.GetReservation(), name}, {"--constraint", s.GetConstraint(), name},
		{"--comment", s.GetComment(), name}, {"--signal", s.GetSignal(), name}, {"--mail-user", s.GetMailUser(), name},
		{"--open-mode", s.GetOpenMode(), name}, {"--gres", s.GetGresOption(), name}, {"--gpus", s.GetGpusOption(), name},
		{"--gpus-per-node", s.GetGpusPerNodeOption(), name}, {"--gpus-per-task", s.GetGpusPerTaskOption(), name},
		{"--chdir", s.GetWorkdir(), config.MaxPathLength}, {"--output", s.GetOutput(), config.MaxPathLength},
		{"--error", s.GetError(), config.MaxPathLength}, {"--input", s.GetInput(), config.MaxPathLength},
		{"command", s.GetCommand(), config.MaxPathLength},
		{"--dependency", s.GetDependency(), config.MaxExpressionLength}, {"--array", s.GetArray(), config.MaxExpressionLength},
	}
	for _, f := range fields {
		if err := checkText(f.opt, f.v, f.limit); err != nil {
			return err
		}
	}
	for _, list := range []struct {
		opt string
		vs  []string
	}{{"--partition", s.GetPartitions()}, {"--mail-type", s.GetMailType()}, {"--nodelist", s.GetNodelist()}, {"--exclude", s.GetExclude()}} {
		if len(list.vs) > config.MaxNodeCount {
			return status.Errorf(codes.InvalidArgument, "%s: %d entries is more than %d", list.opt, len(list.vs), config.MaxNodeCount)
		}
		for _, v := range list.vs {
			if err := checkText(list.opt, v, name); err != nil {
				return err
			}
		}
	}
	g := s.GetGres()
	for _, terms := range [][]*pb.GRESTerm{g.GetPerJob(), g.GetPerNode(), g.GetPerTask()} {
		for _, t := range terms {
			if err := checkText("--gres", t.GetName()+":"+t.GetType(), name); err != nil {
				return err
			}
		}
	}
	return checkProcessInput(s)
}

// checkProcessInput refuses what exec cannot pass to the job: a NUL in
// the environment or the arguments, a variable name with '=' or none.
func checkProcessInput(s *pb.JobSpec) error {
	for k, v := range s.GetEnv() {
		if k == "" || strings.ContainsAny(k, "=\x00") {
			return status.Errorf(codes.InvalidArgument, "--export: variable name %q: must be non-empty, without '=' or NUL", k)
		}
		if strings.IndexByte(v, 0) >= 0 {
			return status.Errorf(codes.InvalidArgument, "--export: variable %q: its value contains a NUL character", k)
		}
	}
	for i, a := range s.GetArgv() {
		if strings.IndexByte(a, 0) >= 0 {
			return status.Errorf(codes.InvalidArgument, "script argument %d (%q): contains a NUL character", i+1, a)
		}
	}
	return nil
}

// checkUpdateText applies checkText to the strings an update stores.
func checkUpdateText(req *pb.UpdateJobRequest, l config.JobLimits) error {
	name := nameLimit(l)
	for _, f := range []struct {
		field string
		v     *string
	}{{"JobName", req.Name}, {"Comment", req.Comment}, {"Partition", req.Partition}, {"QOS", req.Qos}, {"Account", req.Account}} {
		if f.v == nil {
			continue
		}
		if err := checkText(f.field, *f.v, name); err != nil {
			return err
		}
	}
	return nil
}

// nameLimit is the cluster's MaxNameLength, or Slurm's when unset.
func nameLimit(l config.JobLimits) int {
	if l.MaxNameLength <= 0 {
		return config.DefaultMaxNameLength
	}
	return l.MaxNameLength
}
