package controller

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/parityhpc/parity/scheduler/config"
	"github.com/parityhpc/parity/scheduler/jobspec"
)

// applyPartitionSettings applies scontrol's KEY=VALUE settings to p, all
// or none: the first bad one is refused in Slurm 22.05's words (naming
// the key and value) and p is left as it was. c.mu held.
func (c *Controller) applyPartitionSettings(p *config.Partition, settings []string) error {
	next := *p
	seen := map[string]bool{}
	for _, kv := range settings {
		key, val, ok := strings.Cut(kv, "=")
		k := strings.ToLower(key)
		if !ok {
			return badSetting("Update of this parameter is not supported: %s", kv)
		}
		seen[k] = true
		if err := c.applyPartitionSetting(&next, k, key, val); err != nil {
			return err
		}
	}
	for _, pair := range [][2]string{{"allowaccounts", "denyaccounts"}, {"allowqos", "denyqos"}} {
		if seen[pair[0]] && seen[pair[1]] {
			return badSetting("Invalid input: %s and %s exclude each other; set one", pair[0], pair[1])
		}
	}
	if next.DefaultTime > 0 && next.MaxTime > 0 && next.DefaultTime > next.MaxTime {
		return badSetting("Invalid input: DefaultTime=%s is above MaxTime=%s", jobspec.FormatDuration(next.DefaultTime), jobspec.FormatDuration(next.MaxTime))
	}
	*p = next
	return nil
}

func badSetting(format string, a ...any) error {
	return status.Errorf(codes.InvalidArgument, format, a...)
}

// applyPartitionSetting applies one setting (k is key lower-cased).
func (c *Controller) applyPartitionSetting(p *config.Partition, k, key, val string) error {
	switch k {
	case "nodes":
		return c.setPartitionNodes(p, val)
	case "maxtime", "defaulttime":
		d, err := jobspec.ParseDuration(val)
		if err != nil {
			return badSetting("Invalid input %s=%s", key, val)
		}
		d = max(d, 0) // UNLIMITED/INFINITE: no limit
		if k == "maxtime" {
			p.MaxTime = d
		} else {
			p.DefaultTime = d
		}
	case "state":
		v := strings.ToUpper(val)
		if !slices.Contains([]string{"UP", "DOWN", "DRAIN", "INACTIVE"}, v) {
			return badSetting("Invalid input: State=%s; Acceptable State values are UP, DOWN, DRAIN and INACTIVE", val)
		}
		p.State, p.Down = v, false
	case "allowaccounts", "denyaccounts", "allowqos", "denyqos":
		setPartitionList(p, k, val)
	case "prioritytier", "priorityjobfactor":
		n, err := strconv.ParseUint(val, 10, 16)
		if err != nil || n > 65533 {
			return badSetting("Invalid %s value: %s", key, val)
		}
		if k == "prioritytier" {
			p.PriorityTier = int(n)
		} else {
			p.PriorityJobFactor = int(n)
		}
	case "oversubscribe", "shared":
		v := strings.ToUpper(val)
		switch {
		case v == "NO" || v == "EXCLUSIVE":
			p.OverSubscribe = v
		case v == "YES" || v == "FORCE" || strings.HasPrefix(v, "YES:") || strings.HasPrefix(v, "FORCE:"):
			return status.Errorf(codes.Unimplemented, "OverSubscribe=%s: Parity does not oversubscribe CPUs or GPUs; NO and EXCLUSIVE are served", val)
		default:
			return badSetting("Invalid input: OverSubscribe=%s; Acceptable OverSubscribe values are NO, EXCLUSIVE, YES:#, and FORCE:#", val)
		}
	case "default":
		switch strings.ToUpper(val) {
		case "YES":
			p.Default = true
		case "NO":
			p.Default = false
		default:
			return badSetting("Invalid input: Default=%s; Acceptable Default values are YES and NO", val)
		}
	default:
		return badSetting("Update of this parameter is not supported: %s=%s", key, val)
	}
	return nil
}

// setPartitionNodes sets Nodes (a hostlist of configured nodes, ALL, or
// empty for none), refusing a node the cluster does not have.
func (c *Controller) setPartitionNodes(p *config.Partition, val string) error {
	var names []string
	switch {
	case strings.EqualFold(val, "ALL"):
		names = slices.Clone(c.st.names)
	case val != "":
		var err error
		if names, err = jobspec.ExpandHostlist(val); err != nil {
			return status.Errorf(codes.NotFound, "Invalid node name specified: Nodes=%s: %v", val, err)
		}
		for _, n := range names {
			if c.st.nodes[n] == nil {
				return status.Errorf(codes.NotFound, "Invalid node name specified: %s is not a node of this cluster", n)
			}
		}
	}
	p.NodeNames, p.Nodes = names, jobspec.CompressHostlist(names)
	return nil
}

// setPartitionList sets one of the allow/deny lists; ALL (or empty)
// clears it, and setting one side clears the other, which it replaces.
func setPartitionList(p *config.Partition, k, val string) {
	var list []string
	if val != "" && !strings.EqualFold(val, "ALL") {
		list = strings.Split(val, ",")
	}
	switch k {
	case "allowaccounts":
		p.AllowAccounts, p.DenyAccounts = list, nil
	case "denyaccounts":
		p.DenyAccounts, p.AllowAccounts = list, nil
	case "allowqos":
		p.AllowQOS, p.DenyQOS = list, nil
	case "denyqos":
		p.DenyQOS, p.AllowQOS = list, nil
	}
}

// partState is Slurm's State of a partition.
func partState(p *config.Partition) string {
	switch {
	case p.State != "":
		return p.State
	case p.Down:
		return "DOWN"
	}
	return "UP"
}

// partitionText is a partition's settings as scontrol takes them, for
// the decision log ("" for none).
func partitionText(p *config.Partition) string {
	if p == nil {
		return ""
	}
	limit := func(d time.Duration) string {
		if d == 0 {
			return "UNLIMITED"
		}
		return jobspec.FormatDuration(d)
	}
	list := func(l []string) string {
		if len(l) == 0 {
			return "ALL"
		}
		return strings.Join(l, ",")
	}
	s := fmt.Sprintf("Nodes=%s MaxTime=%s DefaultTime=%s State=%s PriorityTier=%d PriorityJobFactor=%d OverSubscribe=%s Default=%s",
		p.Nodes, limit(p.MaxTime), limit(p.DefaultTime), partState(p), p.PriorityTier, p.PriorityJobFactor,
		cmp.Or(p.OverSubscribe, "NO"), map[bool]string{true: "YES", false: "NO"}[p.Default])
	if len(p.DenyAccounts) > 0 {
		s += " DenyAccounts=" + list(p.DenyAccounts)
	} else {
		s += " AllowAccounts=" + list(p.AllowAccounts)
	}
	if len(p.DenyQOS) > 0 {
		s += " DenyQos=" + list(p.DenyQOS)
	} else {
		s += " AllowQos=" + list(p.AllowQOS)
	}
	return s
}

// partitionTakesJobs refuses a new job for a partition in State DRAIN or
// INACTIVE, as Slurm's sbatch is refused there.
func partitionTakesJobs(p *config.Partition) error {
	if st := partState(p); st == "DRAIN" || st == "INACTIVE" {
		return status.Errorf(codes.InvalidArgument, "Required partition not available (inactive or drain): partition %s is %s", p.Name, st)
	}
	return nil
}
