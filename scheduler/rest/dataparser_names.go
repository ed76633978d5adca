package rest

import (
	"google.golang.org/protobuf/types/known/timestamppb"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/rest/dataparser"
)

// The v0.0.44 objects and their conversions live in package dataparser,
// which the lean command line (squeue --json, without the controller's
// dependencies) shares with this package; these are its names here.
type (
	envelope       = dataparser.Envelope
	meta           = dataparser.Meta
	metaPlugin     = dataparser.MetaPlugin
	metaClient     = dataparser.MetaClient
	metaRelease    = dataparser.MetaRelease
	apiErr         = dataparser.APIError
	warning        = dataparser.Warning
	noVal          = dataparser.NoVal
	noValF         = dataparser.NoValF
	jobInfoResp    = dataparser.JobInfoResp
	jobInfo        = dataparser.JobInfo
	exitCode       = dataparser.ExitCode
	exitSignal     = dataparser.ExitSignal
	nodesResp      = dataparser.NodesResp
	nodeInfo       = dataparser.NodeInfo
	partitionsResp = dataparser.PartitionsResp
	partitionInfo  = dataparser.PartitionInfo
)

func num(n int64) *noVal                              { return dataparser.Num(n) }
func unset() *noVal                                   { return dataparser.Unset() }
func infinite() *noVal                                { return dataparser.Infinite() }
func numOrInf(n int64) *noVal                         { return dataparser.NumOrInf(n) }
func epoch(ts *timestamppb.Timestamp) *noVal          { return dataparser.Epoch(ts) }
func jobStateOK(s string) bool                        { return dataparser.JobStateOK(s) }
func jobState(j *pb.Job) []string                     { return dataparser.JobState(j) }
func toJobInfo(j *pb.Job, cluster string) *jobInfo    { return dataparser.ToJobInfo(j, cluster) }
func limitMinutes(sec int64) *noVal                   { return dataparser.LimitMinutes(sec) }
func tresOf(terms []*pb.GRESTerm) string              { return dataparser.TresOf(terms) }
func allocNodes(j *pb.Job) []string                   { return dataparser.AllocNodes(j) }
func allocCPUs(j *pb.Job) int                         { return dataparser.AllocCPUs(j) }
func cpuListLen(list string) int                      { return dataparser.CPUListLen(list) }
func exitOf(j *pb.Job) *exitCode                      { return dataparser.ExitOf(j) }
func signalName(n int32) string                       { return dataparser.SignalName(n) }
func signalNumber(s string) (int32, bool)             { return dataparser.SignalNumber(s) }
func orEmpty(s []string) []string                     { return dataparser.OrEmpty(s) }
func nodeState(n *pb.Node) []string                   { return dataparser.NodeState(n) }
func gpuGres(gpus []*pb.GPU) (string, string, string) { return dataparser.GPUGres(gpus) }
func reason(j *pb.Job) string                         { return dataparser.StateReason(j) }
func minutesOrInf(sec int64) *noVal                   { return dataparser.MinutesOrInf(sec) }

func (h *Handler) toNode(n *pb.Node) *nodeInfo { return dataparser.ToNode(n, h.b.ClusterName) }
func (h *Handler) toPartition(p *pb.Partition) *partitionInfo {
	return dataparser.ToPartition(p, h.b.ClusterName)
}
