package rest

import (
	"net"
	"slices"
	"strconv"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/config"
	"github.com/parityhpc/parity/scheduler/jobspec"
)

// slurmdbd's records Parity keeps in its cluster file (accounts, users,
// QOS, the cluster and its TRES) are read from Backend.Config; the jobs
// from the ledger through the Accounting service. All are read-only.

type tres struct {
	Type  string `json:"type"`
	Name  string `json:"name,omitempty"`
	ID    int32  `json:"id,omitempty"`
	Count int64  `json:"count"`
}

type tresResp struct {
	TRES []tres `json:"TRES"`
	envelope
}

type clusterRec struct {
	Name       string `json:"name"`
	Nodes      string `json:"nodes"`
	Controller struct {
		Host string `json:"host"`
		Port int32  `json:"port"`
	} `json:"controller"`
	Flags        []string `json:"flags"`
	RPCVersion   int32    `json:"rpc_version"`
	Tres         []tres   `json:"tres"`
	Associations struct {
		Root assocShort `json:"root"`
	} `json:"associations"`
}

type clustersResp struct {
	Clusters []*clusterRec `json:"clusters"`
	envelope
}

type dbPing struct {
	Hostname   string `json:"hostname"`
	Responding bool   `json:"responding"`
	Latency    int64  `json:"latency"`
	Primary    bool   `json:"primary"`
}

type dbPingResp struct {
	Pings []dbPing `json:"pings"`
	envelope
}

type dbDiagResp struct {
	Statistics struct {
		TimeStart int64 `json:"time_start"`
	} `json:"statistics"`
	envelope
}

// rpcVersion is SLURM_PROTOCOL_VERSION of Slurm 25.11, which data parser
// v0.0.44 comes with.
const rpcVersion = 11008

// The fixed TRES ids slurmdbd gives (cpu 1, mem 2, …); GRES come after 1000.
var baseTRES = []string{"cpu", "mem", "energy", "node", "billing", "fs/disk", "vmem", "pages"}

func (h *Handler) config() (*config.Cluster, error) {
	if h.b.State != nil {
		return h.b.State(), nil
	}
	if h.b.Config == nil {
		return nil, status.Error(codes.FailedPrecondition, "this controller was started without a cluster configuration to answer slurmdbd's records from")
	}
	return h.b.Config, nil
}

// clusterTRES is the cluster's TRES with their totals: the node sets'
// expected CPUs, memory (MiB) and GPUs, by type too.
func clusterTRES(cfg *config.Cluster) []tres {
	names := cfg.NodeNames()
	var cpus, mem, gpus int64
	byType := map[string]int64{}
	for _, n := range names {
		s := cfg.NodeSpec(n)
		cpus, mem, gpus = cpus+int64(s.CPUs), mem+s.MemoryMB, gpus+int64(s.GPUs)
		if s.GPUType != "" {
			byType[s.GPUType] += int64(s.GPUs)
		}
	}
	counts := map[string]int64{"cpu": cpus, "mem": mem, "node": int64(len(names)), "billing": cpus}
	var out []tres
	for i, n := range baseTRES {
		out = append(out, tres{Type: n, ID: int32(i + 1), Count: counts[n]})
	}
	out = append(out, tres{Type: "gres", Name: "gpu", ID: 1001, Count: gpus})
	types := make([]string, 0, len(byType))
	for t := range byType {
		types = append(types, t)
	}
	slices.Sort(types)
	for i, t := range types {
		out = append(out, tres{Type: "gres", Name: "gpu:" + t, ID: int32(1002 + i), Count: byType[t]})
	}
	return out
}

// tresID is the id clusterTRES gives a TRES name ("cpu", "gres/gpu:h100").
func tresID(table []tres, typ, name string) int32 {
	for _, t := range table {
		if t.Type == typ && t.Name == name {
			return t.ID
		}
	}
	return 0
}

func serveDBTRES(h *Handler, c *call) (any, error) {
	cfg, err := h.config()
	if err != nil {
		return nil, err
	}
	return &tresResp{TRES: clusterTRES(cfg)}, nil
}

func (h *Handler) clusterRecord(c *call, cfg *config.Cluster) *clusterRec {
	r := &clusterRec{Name: h.b.ClusterName, Flags: []string{}, RPCVersion: rpcVersion, Tres: clusterTRES(cfg)}
	r.Nodes = jobspec.CompressHostlistSorted(cfg.NodeNames())
	host, port, err := net.SplitHostPort(c.r.Host)
	if err != nil {
		host = c.r.Host
	}
	p, _ := strconv.ParseInt(port, 10, 32)
	r.Controller.Host, r.Controller.Port = host, int32(p)
	r.Associations.Root = assocShort{Account: "root", Cluster: h.b.ClusterName, User: ""}
	return r
}

func serveDBClusters(h *Handler, c *call) (any, error) {
	if _, err := updateTime(c); err != nil {
		return nil, err
	}
	cfg, err := h.config()
	if err != nil {
		return nil, err
	}
	return &clustersResp{Clusters: []*clusterRec{h.clusterRecord(c, cfg)}}, nil
}

// serveDBPing pings the ledger with a query that selects nothing: the
// accounting store answers, or it does not (no ledger, or it failed).
func serveDBPing(h *Handler, c *call) (any, error) {
	start := h.b.Now()
	err := h.b.Accounting.Jobs(&pb.AccountingJobsRequest{Filter: &pb.AccountingFilter{Jobs: []*pb.JobSelector{{Id: 1 << 62, Task: -1}}}},
		&collect[pb.AccountingJobsResponse]{ctx: c.ctx, send: func(*pb.AccountingJobsResponse) error { return nil }})
	if err != nil {
		c.warn("ping", "accounting ledger: %s", status.Convert(err).Message())
	}
	host, _, _ := strings.Cut(c.r.Host, ":")
	return &dbPingResp{Pings: []dbPing{{Hostname: host, Responding: err == nil, Latency: h.b.Now().Sub(start).Microseconds(), Primary: true}}}, nil
}

func serveDBDiag(h *Handler, c *call) (any, error) {
	info, err := h.b.Cluster.Info(c.ctx, &pb.InfoRequest{})
	if err != nil {
		return nil, err
	}
	out := &dbDiagResp{}
	out.Statistics.TimeStart = info.GetStarted().GetSeconds()
	return out, nil
}

type dbConfigResp struct {
	Clusters     []*clusterRec `json:"clusters"`
	Tres         []tres        `json:"tres"`
	Accounts     []*account    `json:"accounts"`
	Users        []*dbUser     `json:"users"`
	QOS          []*qosRec     `json:"qos"`
	Associations []*assoc      `json:"associations"`
	envelope
}

// serveDBConfig is sacctmgr dump's content: everything the records above hold.
func serveDBConfig(h *Handler, c *call) (any, error) {
	cfg, err := h.config()
	if err != nil {
		return nil, err
	}
	return &dbConfigResp{Clusters: []*clusterRec{h.clusterRecord(c, cfg)}, Tres: clusterTRES(cfg), Accounts: h.accounts(cfg, ""),
		Users: h.users(c, cfg, ""), QOS: qosList(cfg, ""), Associations: h.assocs(c, cfg, assocFilter{})}, nil
}

func serveDBCluster(h *Handler, c *call) (any, error) {
	cfg, err := h.config()
	if err != nil {
		return nil, err
	}
	if name := c.r.PathValue("cluster_name"); name != h.b.ClusterName {
		return nil, status.Errorf(codes.NotFound, "cluster %q: no such cluster (this is %q)", name, h.b.ClusterName)
	}
	return &clustersResp{Clusters: []*clusterRec{h.clusterRecord(c, cfg)}}, nil
}
