package controller

import (
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/timestamppb"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/auth"
	"github.com/parityhpc/parity/scheduler/config"
	"github.com/parityhpc/parity/scheduler/policy"
)

// checkSpecInput refuses what no cluster accepts, before any default or
// partition is looked at: a quantity past its bound (config's fixed
// bounds, the cluster's JobLimits) or a product of them that would be,
// text that is not printable or too long, a batch job without a usable
// script. It is pure, so every submission path shares it (and a fuzz
// target can reach it without a controller).
func checkSpecInput(s *pb.JobSpec, l config.JobLimits) error {
	if err := checkCounts(s); err != nil {
		return err
	}
	if err := checkPerNode(s); err != nil {
		return err
	}
	if err := checkSpecText(s, l); err != nil {
		return err
	}
	if err := checkTimes(s); err != nil {
		return err
	}
	if !s.GetInteractive() {
		return checkScript(s.GetScript(), l.MaxScriptSize)
	}
	return nil
}

// checkNodeCount refuses a job left no node count (-N 0, or an empty
// -w) unless it is held, as Slurm 22.05's slurmctld does (the anchor
// refused sbatch -N 0 and -w "" with "Node count specification invalid",
// took them with --hold, and answered --test-only for them).
func checkNodeCount(s *pb.JobSpec) error {
	if s.GetHold() || s.GetNodes() != 0 {
		return nil
	}
	for _, f := range []struct{ field, option string }{{"nodes", "--nodes"}, {"nodeList", "--nodelist"}} {
		if slices.Contains(s.GetEmptyOptions(), f.field) {
			return status.Errorf(codes.InvalidArgument, "%s: Node count specification invalid", f.option)
		}
	}
	return nil
}

// checkCounts bounds every number of the request on its own.
func checkCounts(s *pb.JobSpec) error {
	for _, f := range []struct {
		opt      string
		v, limit int64
	}{
		{"--nodes", int64(s.GetNodes()), config.MaxNodeCount}, {"maxNodes", int64(s.GetMaxNodes()), config.MaxNodeCount},
		{"--ntasks", int64(s.GetNtasks()), config.MaxCount}, {"--ntasks-per-node", int64(s.GetNtasksPerNode()), config.MaxCount},
		{"--cpus-per-task", int64(s.GetCpusPerTask()), config.MaxCount}, {"--cpus-per-gpu", int64(s.GetCpusPerGpu()), config.MaxCount},
		{"--switches", int64(s.GetSwitches()), config.MaxCount},
		{"--mem-per-cpu", s.GetMemPerCpuMb(), config.MaxMemoryMB}, {"--mem-per-gpu", s.GetMemPerGpuMb(), config.MaxMemoryMB},
		{"--time-min", s.GetTimeMinSeconds(), config.MaxSeconds}, {"switchWaitSeconds", s.GetSwitchWaitSeconds(), config.MaxSeconds},
	} {
		if f.v < 0 {
			return invalid(f.opt, f.v, "must not be negative")
		}
		if f.v > f.limit {
			return invalid(f.opt, f.v, "must be at most %d", f.limit)
		}
	}
	// -1 is --mem=0 on the wire: all the memory of each node.
	if m := s.GetMemPerNodeMb(); m < -1 || m > config.MaxMemoryMB {
		return invalid("--mem", m, "must be within 0..%d MiB (-1: all the memory of each node)", config.MaxMemoryMB)
	}
	if mx := s.GetMaxNodes(); mx > 0 && mx < s.GetNodes() {
		return invalid("maxNodes", mx, "the maximum node count is below --nodes=%d", s.GetNodes())
	}
	if t := s.GetTimeLimitSeconds(); t < -1 || t > config.MaxSeconds {
		return invalid("--time", t, "requested time limit is invalid (seconds, -1 for none, at most %d)", config.MaxSeconds)
	}
	if tm, t := s.GetTimeMinSeconds(), s.GetTimeLimitSeconds(); tm > 0 && t > 0 && tm > t {
		return invalid("--time-min", fmtSeconds(tm), "invalid time-min specification: more than --time=%s", fmtSeconds(t))
	}
	return checkNice("--nice", s.GetNice())
}

// checkPerNode bounds what the request makes per node (CPUs, GPUs and
// memory) and per job (GPUs): the products the scheduler forms, checked
// here without forming them, so none can overflow.
func checkPerNode(s *pb.JobSpec) error {
	nodes := max(int64(s.GetNodes()), 1)
	tpn := max(int64(s.GetNtasksPerNode()), 1)
	if s.GetNtasksPerNode() == 0 && s.GetNtasks() > 0 {
		tpn = (int64(s.GetNtasks())-1)/nodes + 1
	}
	cpt := max(int64(s.GetCpusPerTask()), 1)
	if !within(tpn, cpt, config.MaxCount) {
		return invalid("--cpus-per-task", cpt, "%d task(s) per node × %d CPUs is more than %d CPUs per node", tpn, cpt, config.MaxCount)
	}
	g := s.GetGres()
	var perNode, perJob int64
	for _, ts := range []struct {
		terms []*pb.GRESTerm
		mult  int64
	}{{g.GetPerNode(), 1}, {g.GetPerTask(), tpn}, {g.GetPerJob(), 0}} {
		for _, t := range ts.terms {
			c := t.GetCount()
			if c < 0 || !within(c, max(ts.mult, 1), config.MaxGPUCount) {
				return invalid("--gres", gresText(t), "the GPU count must be within 0..%d per node, per task × tasks per node and per job", config.MaxGPUCount)
			}
			if ts.mult == 0 {
				perJob += c
			} else {
				perNode += c * ts.mult
			}
			if perNode > config.MaxGPUCount || perJob > config.MaxGPUCount {
				return invalid("--gres", gresText(t), "more than %d GPUs per node or per job in all", config.MaxGPUCount)
			}
		}
	}
	// A node's share of a per-job count is at most all of it.
	gpn := max(perNode, perJob)
	if c := int64(s.GetCpusPerGpu()); !within(c, gpn, config.MaxCount) {
		return invalid("--cpus-per-gpu", c, "%d GPUs per node × %d CPUs is more than %d CPUs per node", gpn, c, config.MaxCount)
	}
	cpn := max(tpn*cpt, int64(s.GetCpusPerGpu())*gpn)
	if m := s.GetMemPerCpuMb(); !within(m, cpn, config.MaxMemoryMB) {
		return invalid("--mem-per-cpu", m, "%d MiB × %d CPUs per node is more than %d MiB per node", m, cpn, config.MaxMemoryMB)
	}
	if m := s.GetMemPerGpuMb(); !within(m, gpn, config.MaxMemoryMB) {
		return invalid("--mem-per-gpu", m, "%d MiB × %d GPUs per node is more than %d MiB per node", m, gpn, config.MaxMemoryMB)
	}
	return nil
}

// within reports whether a×b <= limit for non-negative a and b, without
// forming a product that could overflow.
func within(a, b, limit int64) bool {
	return a == 0 || b == 0 || a <= limit/b
}

func gresText(t *pb.GRESTerm) string {
	if t.GetType() != "" {
		return fmt.Sprintf("%s:%s:%d", t.GetName(), t.GetType(), t.GetCount())
	}
	return fmt.Sprintf("%s:%d", t.GetName(), t.GetCount())
}

// checkNice bounds a nice value (submit and update).
func checkNice(opt string, v int32) error {
	if v < policy.MinNice || v > policy.MaxNice {
		return invalid(opt, v, "must be within %d..%d", policy.MinNice, policy.MaxNice)
	}
	return nil
}

// niceAllowed is the one rule for who may set a nice value, on every path
// (submit over gRPC and HTTP, update): as in Slurm, a negative nice raises
// the job's priority, which only operators may do.
func niceAllowed(id auth.Identity, opt string, v int32) error {
	if v < 0 && !id.Operator() {
		return status.Errorf(codes.PermissionDenied, "%s=%d: access/permission denied: only operators may set a negative nice", opt, v)
	}
	return nil
}

func checkTimes(s *pb.JobSpec) error {
	for _, f := range []struct {
		opt string
		ts  *timestamppb.Timestamp
	}{{"--begin", s.GetBegin()}, {"--deadline", s.GetDeadline()}} {
		if f.ts != nil {
			if err := f.ts.CheckValid(); err != nil {
				return invalid(f.opt, fmt.Sprintf("%ds", f.ts.GetSeconds()), "not a valid time: %v", err)
			}
		}
	}
	return nil
}

// checkScript refuses what sbatch refuses before reading directives, so an
// API client's job fails at submit, not at launch.
func checkScript(script string, limit int) error {
	switch {
	case len(script) > limit:
		return status.Errorf(codes.InvalidArgument, "script: %d bytes is more than MaxScriptSize=%d", len(script), limit)
	case strings.TrimSpace(script) == "":
		return status.Error(codes.InvalidArgument, "script: the batch script is empty")
	case !strings.HasPrefix(script, "#!"):
		return status.Error(codes.InvalidArgument, "script: this does not look like a batch script: the first line must start with #! followed by the path to an interpreter")
	case strings.IndexByte(script, 0) >= 0:
		return status.Error(codes.InvalidArgument, "script: the batch script contains a NUL character")
	}
	return nil
}

// checkText refuses a control character (C0, DEL, C1: what can forge a
// line, move the cursor or cut a string in a terminal or a log), bytes
// that are not UTF-8, and more than limit bytes. The message names the
// field; the value is quoted, so the refusal cannot forge output either.
func checkText(field, v string, limit int) error {
	if len(v) > limit {
		return status.Errorf(codes.InvalidArgument, "%s: %d bytes is more than the limit of %d", field, len(v), limit)
	}
	for i, r := range v {
		if r == utf8.RuneError || unicode.IsControl(r) {
			if r == utf8.RuneError {
				if _, n := utf8.DecodeRuneInString(v[i:]); n == 1 {
					return status.Errorf(codes.InvalidArgument, "%s=%q: not UTF-8 text (byte %d)", field, v, i)
				}
				continue
			}
			return status.Errorf(codes.InvalidArgument, "%s=%q: contains a control character (%U at byte %d); only printable text is accepted", field, v, r, i)
		}
	}
	return nil
}
