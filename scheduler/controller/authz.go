package controller

import (
	"context"
	"slices"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/auth"
	"github.com/parityhpc/parity/scheduler/core"
)

// Authorisation rules (the interceptors have already authenticated):
//   - a user sees and acts on (cancel, hold, release, requeue, update,
//     explain) only their own jobs; other users' jobs are not found for them;
//   - operators and admins see and act on every job and drain/resume nodes;
//   - a job's script and environment go to its owner and to admins only —
//     operators run the cluster but do not read researchers' code or
//     secrets (Slurm lets root read them; so do our admins);
//   - agents act only for the node their credential names.

// caller returns the authenticated identity; the interceptors guarantee one.
func caller(ctx context.Context) auth.Identity {
	id, _ := auth.FromContext(ctx)
	return id
}

// canSee reports whether id may see or act on j.
func canSee(id auth.Identity, j *job) bool { return id.Operator() || id.User == j.owner() }

// canReadScript reports whether id may read j's script and environment.
func canReadScript(id auth.Identity, j *job) bool { return id.Admin() || id.User == j.owner() }

// jobForLocked finds a job the caller may see (c.mu held). Another user's
// job answers exactly as an id never used does: a refusal would confirm
// that the job exists (and so what others run, and how many).
func (c *Controller) jobForLocked(id auth.Identity, jid uint64) (*job, error) {
	j := c.st.jobs[core.JobID(jid)]
	if j == nil || !canSee(id, j) {
		return nil, unknownJob(jid)
	}
	return j, nil
}

// unknownJob is the answer to a job id the caller does not know.
func unknownJob(jid uint64) error {
	return status.Errorf(codes.NotFound, "invalid job id specified: %d", jid)
}

// requireOperator refuses callers below operator.
func requireOperator(id auth.Identity, what string) error {
	if !id.Operator() {
		return status.Errorf(codes.PermissionDenied, "access/permission denied: %s needs an operator or admin (you are %s %q)", what, id.Role, id.User)
	}
	return nil
}

// requireNode refuses an agent speaking for another node.
func requireNode(id auth.Identity, node string) error {
	if id.Role == auth.RoleAgent && id.Node != node {
		return status.Errorf(codes.PermissionDenied, "agent credential of node %q cannot speak for node %q", id.Node, node)
	}
	return nil
}

// eventVisible reports whether a user may see a decision log entry: node
// events are public, job events belong to the job's owner.
func eventVisible(id auth.Identity) func(*pb.Event) bool {
	if id.Operator() {
		return nil
	}
	return func(ev *pb.Event) bool {
		return ev.GetJobId() == 0 || ev.GetFields()["user"] == id.User
	}
}

// visibleUsers narrows a user filter to what the caller may list.
func visibleUsers(id auth.Identity, users []string) []string {
	if id.Operator() {
		return users
	}
	if len(users) == 0 || slices.Contains(users, id.User) {
		return []string{id.User}
	}
	return []string{"\x00nobody"}
}
