package dataparser

import (
	"encoding/json"
	"fmt"
	"io"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
)

// CLIEncoder writes what Slurm's commands print with --json: squeue and
// scontrol show job print v0.0.44_openapi_job_info_resp, sinfo and
// scontrol show node v0.0.44_openapi_nodes_resp, scontrol show partition
// v0.0.44_openapi_partition_resp, with the conversions the REST API's
// GET jobs, nodes and partitions use, so the two cannot differ.
type CLIEncoder struct {
	// Cluster and Version fill the answer's meta (the controller's
	// ClusterInfo); Command is the meta.command argv, as Slurm's.
	Cluster string
	Version string
	Command []string
	// Now stamps last_update (time.Now if nil).
	Now func() time.Time
}

func (e CLIEncoder) now() time.Time {
	if e.Now == nil {
		return time.Now()
	}
	return e.Now()
}

// Jobs writes squeue --json and scontrol show job --json; lastPass is
// the scheduler's last pass (ClusterInfo.last_pass), last_backfill.
func (e CLIEncoder) Jobs(w io.Writer, jobs []*pb.Job, lastPass *timestamppb.Timestamp) error {
	out := &JobInfoResp{Jobs: make([]*JobInfo, 0, len(jobs)), LastBackfill: Epoch(lastPass), LastUpdate: Num(e.now().Unix())}
	for _, j := range jobs {
		out.Jobs = append(out.Jobs, ToJobInfo(j, e.Cluster))
	}
	return e.Write(w, out)
}

// Nodes writes sinfo --json and scontrol show node --json.
func (e CLIEncoder) Nodes(w io.Writer, nodes []*pb.Node) error {
	out := &NodesResp{Nodes: make([]*NodeInfo, 0, len(nodes)), LastUpdate: Num(e.now().Unix())}
	for _, n := range nodes {
		out.Nodes = append(out.Nodes, ToNode(n, e.Cluster))
	}
	return e.Write(w, out)
}

// Partitions writes scontrol show partition --json.
func (e CLIEncoder) Partitions(w io.Writer, parts []*pb.Partition) error {
	out := &PartitionsResp{Partitions: make([]*PartitionInfo, 0, len(parts)), LastUpdate: Num(e.now().Unix())}
	for _, p := range parts {
		out.Partitions = append(out.Partitions, ToPartition(p, e.Cluster))
	}
	return e.Write(w, out)
}

// Write fills body's envelope as a command's (no plugin: the command
// read the controller itself) and prints it indented, as
// SLURM_JSON=pretty, Slurm's default.
func (e CLIEncoder) Write(w io.Writer, body interface{ Env() *Envelope }) error {
	env := body.Env()
	m := &Meta{Command: e.Command}
	if m.Command == nil {
		m.Command = []string{}
	}
	m.Plugin.DataParser = "data_parser/" + Version
	m.Slurm.Release, m.Slurm.Cluster = "parity "+e.Version, e.Cluster
	env.Meta, env.Errors, env.Warnings = m, []APIError{}, []Warning{}
	b, err := json.MarshalIndent(body, "", "  ")
	if err != nil {
		return fmt.Errorf("dataparser: encode --json: %w", err)
	}
	_, err = w.Write(append(b, '\n'))
	return err
}
