package controller

import (
	"fmt"
	"path"
	"slices"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/config"
)

// invalid reports a bad request the way sbatch does: the option, its value
// and Slurm's kind of message.
func invalid(option string, value any, msg string, args ...any) error {
	return status.Errorf(codes.InvalidArgument, "%s=%v: %s", option, value, fmt.Sprintf(msg, args...))
}

// resolveSpec applies cluster defaults to a submitted request (partition,
// account, QOS) and rejects what can never run here, naming the option
// and value (what no cluster accepts is checkSpecInput's, before this). capsOf gives what the partition's nodes offer. A job may name
// several partitions (-p a,b): each is checked on its own, one where the
// job can never run is dropped with a note (the returned notes), and the
// job is refused only when it fits none of them.
func (c *Controller) resolveSpec(user string, s *pb.JobSpec, capsOf func(*config.Partition) partCaps) ([]string, error) {
	cfg := c.pcfg()
	names, err := partitionList(cfg, s)
	if err != nil {
		return nil, err
	}
	if err := c.resolveAccount(user, s); err != nil {
		return nil, err
	}
	switch {
	case noQOSDefined(cfg) && !withAccounting(cfg):
		// Slurm without accounting ignores --qos: the spec keeps none
		// (shown as (null)) and coreJob gives the job the default.
		s.Qos = ""
	case noQOSDefined(cfg):
		// A cluster with accounts but no QOS of its own still ignores
		// --qos, and shows the default as slurmdbd's Slurm does.
		s.Qos = config.DefaultQOS
	case s.GetQos() == "":
		s.Qos = c.defaultQOS(s.GetAccount(), user)
	case !cfg.HasQOS(s.GetQos()):
		return nil, invalid("--qos", s.GetQos(), "invalid qos specification")
	}
	if err := c.checkAssocQOS(cfg, s.GetAccount(), user, s.GetQos()); err != nil {
		return nil, err
	}
	switch wd := s.GetWorkdir(); {
	case wd == "":
		// An API client that names none gets what slurmd falls back to
		// when a job's directory is unusable, rather than a launch failure.
		s.Workdir = "/tmp"
	case !path.IsAbs(wd):
		return nil, invalid("--chdir", wd, "the working directory must be an absolute path")
	}
	if dep := s.GetDependency(); dep != "" {
		if err := checkDependency(dep); err != nil {
			return nil, invalid("--dependency", dep, "job dependency problem: %v", err)
		}
	}
	if len(names) == 1 {
		part, _ := cfg.Partition(names[0])
		s.Partition, s.Partitions = names[0], nil
		// Held in its one partition, a job asking for more nodes than the
		// partition has is taken, as Slurm 22.05 takes it (-N 5 on the
		// anchor's 4 nodes); where it lists several, such a partition is
		// still dropped.
		return nil, checkInPartition(cfg, s, part, capsOf(part), s.GetHold())
	}
	var kept, notes []string
	var errs []error
	for _, name := range names {
		part, _ := cfg.Partition(name)
		if err := checkInPartition(cfg, s, part, capsOf(part), false); err != nil {
			errs = append(errs, err)
			notes = append(notes, fmt.Sprintf("partition %s dropped: %s", name, status.Convert(err).Message()))
			continue
		}
		kept = append(kept, name)
	}
	if len(kept) == 0 {
		return nil, status.Errorf(codes.InvalidArgument, "--partition=%s: the job fits none of its partitions: %s", strings.Join(names, ","), joinMessages(errs))
	}
	byTier(cfg, kept)
	s.Partition, s.Partitions = kept[0], nil
	if len(kept) > 1 {
		s.Partitions = kept
	}
	return notes, nil
}

// partitionList is the job's partitions: the list field, else the
// partition field split at commas (older clients send "a,b" there), else
// the cluster's default; an unknown name is refused and a repeated one
// counts once (as Slurm builds its list).
func partitionList(cfg *config.Cluster, s *pb.JobSpec) ([]string, error) {
	names := s.GetPartitions()
	if len(names) == 0 {
		names = strings.Split(s.GetPartition(), ",")
	}
	if len(names) == 1 && names[0] == "" {
		return []string{cfg.DefaultPartition().Name}, nil
	}
	value := strings.Join(names, ",")
	out := make([]string, 0, len(names))
	for _, n := range names {
		n = strings.TrimSpace(n)
		if _, ok := cfg.Partition(n); !ok {
			if len(names) == 1 {
				return nil, invalid("--partition", value, "invalid partition name specified (partitions: %s)", partitionNames(cfg))
			}
			return nil, invalid("--partition", value, "invalid partition name specified: %s (partitions: %s)", n, partitionNames(cfg))
		}
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out, nil
}

// byTier orders partitions by PriorityTier, highest first, keeping the
// order given within a tier (how Slurm lists a pending job's partitions).
func byTier(cfg *config.Cluster, names []string) {
	tier := func(n string) int {
		p, _ := cfg.Partition(n)
		return p.PriorityTier
	}
	slices.SortStableFunc(names, func(a, b string) int { return tier(b) - tier(a) })
}

func joinMessages(errs []error) string {
	msgs := make([]string, len(errs))
	for i, err := range errs {
		msgs[i] = status.Convert(err).Message()
	}
	return strings.Join(msgs, "; ")
}

// checkInPartition rejects what can never run in the partition: a time
// limit over its MaxTime, more nodes than it has or allows, nodes or
// features outside it, GPUs none of its nodes (or all of them) offer.
func checkInPartition(cfg *config.Cluster, s *pb.JobSpec, part *config.Partition, caps partCaps, moreNodesOK bool) error {
	if err := partitionTakesJobs(part); err != nil {
		return err
	}
	if t := s.GetTimeLimitSeconds(); part.MaxTime > 0 && (t == -1 || time.Duration(t)*time.Second > part.MaxTime) {
		return invalid("--time", fmtSeconds(t), "requested time limit is invalid (missing or exceeds some limit): partition %s allows at most %s", part.Name, fmtSeconds(int64(part.MaxTime/time.Second)))
	}
	if n := int(s.GetNodes()); n > 0 {
		if n > len(part.NodeNames) && !moreNodesOK {
			return invalid("--nodes", n, "node count specification invalid: partition %s has %d node(s)", part.Name, len(part.NodeNames))
		}
		if part.MaxNodes > 0 && n > part.MaxNodes {
			return invalid("--nodes", n, "node count specification invalid: partition %s allows at most %d", part.Name, part.MaxNodes)
		}
	}
	for _, w := range s.GetNodelist() {
		if !slices.Contains(part.NodeNames, w) {
			return invalid("--nodelist", strings.Join(s.GetNodelist(), ","), "invalid node name specified: %s is not in partition %s", w, part.Name)
		}
	}
	if err := checkConstraint(cfg, part, s.GetConstraint()); err != nil {
		return err
	}
	if s.GetHold() {
		// Slurm 22.05 accepts a held job no node can run (GPU type, GPUs,
		// memory or CPUs per node) and, once released, it pends with
		// Reason=BadConstraints; only an unheld one is refused.
		return nil
	}
	return checkGRES(s, part, caps)
}

func partitionNames(cfg *config.Cluster) string {
	names := make([]string, len(cfg.Partitions))
	for i, p := range cfg.Partitions {
		names[i] = p.Name
	}
	return strings.Join(names, ", ")
}

// checkConstraint rejects features no node of the partition has.
func checkConstraint(cfg *config.Cluster, part *config.Partition, expr string) error {
	if expr == "" {
		return nil
	}
	have := map[string]bool{}
	for _, n := range part.NodeNames {
		for _, f := range cfg.NodeSpec(n).Features {
			have[f] = true
		}
	}
	for _, f := range strings.FieldsFunc(expr, func(r rune) bool { return r == '&' || r == '|' }) {
		if f = strings.TrimSpace(f); !have[f] {
			return invalid("--constraint", expr, "invalid feature specification: no node of partition %s has feature %q", part.Name, f)
		}
	}
	return nil
}

// partCaps is what the largest known node of each partition offers, from
// registered inventories or, failing those, the node sets' expectations.
// A zero field means unknown (not checked).
type partCaps struct {
	maxGPUs  int
	byType   map[string]int // most GPUs of one type on a node
	total    int            // GPUs in the partition
	maxCPUs  int
	maxMemMB int64
	known    bool // every node's GPUs are known
}

// capacities returns partCaps for one partition, cached until an
// inventory changes (c.mu held).
func (c *Controller) capacities(part *config.Partition) partCaps {
	if pc, ok := c.st.caps[part.Name]; ok {
		return pc
	}
	pc := c.computeCaps(part)
	c.st.caps[part.Name] = pc
	return pc
}

func (c *Controller) computeCaps(part *config.Partition) partCaps {
	pc := partCaps{byType: map[string]int{}, known: true}
	for _, name := range part.NodeNames {
		n := c.st.nodes[name]
		if n == nil {
			continue
		}
		gpus, cpus, mem := 0, n.spec.CPUs, n.spec.MemoryMB
		types := map[string]int{}
		switch {
		case n.Inventory != nil:
			// How many devices a job can be given: whole GPUs that are not
			// split and the partitions of those that are (as the scheduler
			// places them); a type is known if any device has it.
			split := map[string]bool{}
			for _, d := range n.Inventory.Devices {
				split[d.Parent] = d.Parent != "" || split[d.Parent]
			}
			for _, d := range n.Inventory.Devices {
				if !split[d.UUID] {
					gpus++
				}
				types[d.Type]++
			}
			if n.Inventory.Host != nil {
				cpus, mem = n.Inventory.Host.CPUs.Count(), int64(n.Inventory.Host.MemoryBytes>>20)
			}
		case n.spec.GPUs > 0 || n.spec.CPUs > 0:
			gpus = n.spec.GPUs
			if n.spec.GPUType != "" {
				types[n.spec.GPUType] = gpus
			}
		default:
			pc.known = false
		}
		pc.maxGPUs, pc.total = max(pc.maxGPUs, gpus), pc.total+gpus
		pc.maxCPUs, pc.maxMemMB = max(pc.maxCPUs, cpus), max(pc.maxMemMB, mem)
		for t, k := range types {
			pc.byType[t] = max(pc.byType[t], k)
		}
	}
	return pc
}

// checkGRES rejects GPU requests no node (or the whole partition) can meet.
func checkGRES(s *pb.JobSpec, part *config.Partition, caps partCaps) error {
	if !caps.known {
		return nil
	}
	opt := func(typed, name string, t *pb.GRESTerm) (string, string) {
		if typed != "" {
			return name, typed
		}
		if t.GetType() != "" {
			return "--gres", fmt.Sprintf("gpu:%s:%d", t.GetType(), t.GetCount())
		}
		return "--gres", fmt.Sprintf("gpu:%d", t.GetCount())
	}
	tpn := int64(max(s.GetNtasksPerNode(), 1))
	if s.GetNtasksPerNode() == 0 && s.GetNtasks() > 0 {
		tpn = int64((s.GetNtasks() + max(s.GetNodes(), 1) - 1) / max(s.GetNodes(), 1))
	}
	check := func(terms []*pb.GRESTerm, typed, name string, mult int64, perNode bool) error {
		for _, t := range terms {
			if t.GetName() != "gpu" {
				continue
			}
			// The option's text is built only for an error: this runs on
			// every submission.
			if t.GetType() != "" && caps.byType[t.GetType()] == 0 {
				o, v := opt(typed, name, t)
				return invalid(o, v, "requested node configuration is not available: partition %s has no %s GPUs (has: %s)", part.Name, t.GetType(), typeList(caps.byType))
			}
			limit := caps.maxGPUs
			if t.GetType() != "" {
				limit = caps.byType[t.GetType()]
			}
			if perNode && t.GetCount()*mult > int64(limit) {
				o, v := opt(typed, name, t)
				return invalid(o, v, "requested node configuration is not available: no node of partition %s has more than %d GPU(s)", part.Name, limit)
			}
			if !perNode && t.GetCount() > int64(caps.total) {
				o, v := opt(typed, name, t)
				return invalid(o, v, "requested node configuration is not available: partition %s has %d GPU(s) in all", part.Name, caps.total)
			}
		}
		return nil
	}
	g := s.GetGres()
	perNodeName := "--gres"
	perNodeTyped := s.GetGresOption()
	if s.GetGpusPerNodeOption() != "" {
		perNodeName, perNodeTyped = "--gpus-per-node", s.GetGpusPerNodeOption()
	}
	if err := check(g.GetPerNode(), perNodeTyped, perNodeName, 1, true); err != nil {
		return err
	}
	if err := check(g.GetPerTask(), s.GetGpusPerTaskOption(), "--gpus-per-task", tpn, true); err != nil {
		return err
	}
	if err := check(g.GetPerJob(), s.GetGpusOption(), "--gpus", 1, false); err != nil {
		return err
	}
	if m := s.GetMemPerNodeMb(); m > 0 && caps.maxMemMB > 0 && m > caps.maxMemMB {
		return invalid("--mem", fmt.Sprintf("%dM", m), "requested node configuration is not available: no node of partition %s has more than %d MiB", part.Name, caps.maxMemMB)
	}
	if cpn := tpn * int64(max(s.GetCpusPerTask(), 1)); caps.maxCPUs > 0 && cpn > int64(caps.maxCPUs) {
		o, v := cpuOption(s, tpn)
		return invalid(o, v, "requested node configuration is not available: %d CPUs per node asked, no node of partition %s has more than %d", cpn, part.Name, caps.maxCPUs)
	}
	return nil
}

// cpuOption names what asked for too many CPUs per node: the tasks per
// node when there are several, or --cpus-per-task when the job set it;
// never a --cpus-per-task=1 the job did not write (an unset count is 0).
func cpuOption(s *pb.JobSpec, tpn int64) (string, any) {
	switch {
	case tpn > 1 && s.GetCpusPerTask() > 1:
		return "--ntasks-per-node", fmt.Sprintf("%d --cpus-per-task=%d", tpn, s.GetCpusPerTask())
	case tpn > 1 && s.GetNtasksPerNode() > 0:
		return "--ntasks-per-node", s.GetNtasksPerNode()
	case tpn > 1:
		return "--ntasks", s.GetNtasks()
	}
	return "--cpus-per-task", s.GetCpusPerTask()
}

func typeList(m map[string]int) string {
	if len(m) == 0 {
		return "none"
	}
	return strings.Join(sortedKeys(m), ", ")
}

// fmtSeconds renders a limit as Slurm does ([D-]HH:MM:SS, UNLIMITED).
func fmtSeconds(s int64) string {
	if s < 0 {
		return "UNLIMITED"
	}
	d, h, m, sec := s/86400, s/3600%24, s/60%60, s%60
	if d > 0 {
		return fmt.Sprintf("%d-%02d:%02d:%02d", d, h, m, sec)
	}
	return fmt.Sprintf("%02d:%02d:%02d", h, m, sec)
}
