package userverbs

import (
	"io"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/rest/dataparser"
)

// The --json of squeue, sinfo and scontrol show prints what Slurm's do:
// the data parser's v0.0.44 objects, encoded by the same code as the
// controller's REST answers (dataparser.CLIEncoder), so a portal that reads
// GET /slurm/v0.0.44/jobs/ reads squeue --json alike.

// slurmJSON is the encoder for a command's --json, with the cluster's
// name, version and last scheduling pass from info.
func slurmJSON(s *session, info *pb.ClusterInfo) dataparser.CLIEncoder {
	return dataparser.CLIEncoder{Cluster: info.GetName(), Version: info.GetVersion(), Command: []string{s.verb, "--json"}}
}

// writeJobsJSON prints jobs as v0.0.44_openapi_job_info_resp.
func writeJobsJSON(s *session, w io.Writer, jobs []*pb.Job) error {
	info, err := s.c.Info(s.ctx)
	if err != nil {
		return s.fail(err)
	}
	return slurmJSON(s, info).Jobs(w, jobs, info.GetLastPass())
}

// writeNodesJSON prints nodes as v0.0.44_openapi_nodes_resp (info: nil
// to have it read).
func writeNodesJSON(s *session, w io.Writer, nodes []*pb.Node, info *pb.ClusterInfo) error {
	if info == nil {
		var err error
		if info, err = s.c.Info(s.ctx); err != nil {
			return s.fail(err)
		}
	}
	return slurmJSON(s, info).Nodes(w, nodes)
}
