package controller

import (
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/config"
)

// withAccounting reports a cluster that defines accounts or QOS of its
// own: Slurm with slurmdbd, whose scontrol and squeue show the account and
// QOS a job was given; without, they show only what was asked for.
func withAccounting(cfg *config.Cluster) bool {
	return len(cfg.Accounts) > 0 || !noQOSDefined(cfg)
}

// noQOSDefined reports a configuration with no qos section: only the
// implicit default QOS exists.
func noQOSDefined(cfg *config.Cluster) bool {
	return len(cfg.QOS) == 1 && cfg.QOS[0].Name == config.DefaultQOS
}

func (c *Controller) resolveAccount(user string, s *pb.JobSpec) error {
	view := c.partitions.view()
	cfg := view.cfg
	if len(cfg.Accounts) == 0 {
		// No associations: Slurm without accounting keeps an account only
		// where one was asked for, so the spec stays as submitted (a
		// defaulted one is shown as (null)); coreJob charges the default.
		if s.GetAccount() == "" && withAccounting(cfg) {
			s.Account = config.DefaultAccount
		}
		return nil
	}
	if s.GetAccount() == "" {
		first, ok := view.users[user]
		if !ok {
			return status.Errorf(codes.InvalidArgument, "--account: invalid account or account/partition combination specified: user %s belongs to no account", user)
		}
		s.Account = first
		return nil
	}
	if _, ok := view.assoc[s.GetAccount()+"/"+user]; !ok {
		// The user's account list is built only for an error.
		return invalid("--account", s.GetAccount(), "invalid account or account/partition combination specified (user %s may use: %s)", user, strings.Join(cfg.UserAccounts(user), ", "))
	}
	return nil
}

// defaultQOS is the QOS a job naming none gets: its association's
// default QOS (sacctmgr defaultqos=), else the cluster's default.
func (c *Controller) defaultQOS(account, user string) string {
	if g, ok := c.partitions.view().grants[account+"/"+user]; ok && g.Default != "" {
		return g.Default
	}
	return config.DefaultQOS
}

// checkAssocQOS refuses a QOS the job's association may not use, as
// slurmctld refuses it ("Invalid qos specification"). Clusters without
// associations, or with no QOS of their own, have no lists to check.
func (c *Controller) checkAssocQOS(cfg *config.Cluster, account, user, qos string) error {
	if len(cfg.Accounts) == 0 || noQOSDefined(cfg) {
		return nil
	}
	g, ok := c.partitions.view().grants[account+"/"+user]
	if !ok || g.Allows(qos) {
		return nil
	}
	return invalid("--qos", qos, "invalid qos specification (association %s/%s may use %s)", account, user, strings.Join(g.Allowed, ","))
}
