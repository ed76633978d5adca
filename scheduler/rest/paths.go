package rest

import pb "github.com/parityhpc/parity/scheduler/api/parityv1"

// operation is one method of one path of the document. skeleton is the
// least body its schema accepts (the properties the schema requires,
// empty): every answer, errors included, is that body with the envelope,
// because slurmrestd answers every outcome in the operation's own schema.
type operation struct {
	method   string
	path     string
	skeleton func() map[string]any
	serve    serveFunc // nil: Parity does not honour it yet
	// grpc is the full gRPC method the call authenticates as, so the
	// controller's own coarse rule applies to it as to its gRPC twin.
	grpc string
	// why, for an operation Parity does not honour, says why and what to
	// do instead (the 501's message).
	why string
}

func none() map[string]any { return map[string]any{} }

func list(keys ...string) func() map[string]any {
	return func() map[string]any {
		m := make(map[string]any, len(keys))
		for _, k := range keys {
			m[k] = []any{}
		}
		return m
	}
}

func withLastUpdate(key string) func() map[string]any {
	return func() map[string]any { return map[string]any{key: []any{}, "last_update": unset()} }
}

func jobsSkeleton() map[string]any {
	return map[string]any{"jobs": []any{}, "last_backfill": unset(), "last_update": unset()}
}

func object(key string) func() map[string]any {
	return func() map[string]any { return map[string]any{key: map[string]any{}} }
}

func text(key string) func() map[string]any {
	return func() map[string]any { return map[string]any{key: ""} }
}

// operations lists all 41 paths of slurm-openapi-v0.0.44.json with every
// method, spelled as the document spells them (trailing slashes
// included); the tests check the list against the document.
func operations() []operation {
	const s, db = "/slurm/v0.0.44/", "/slurmdb/v0.0.44/"
	return []operation{
		{method: "GET", path: s + "ping/", skeleton: list("pings"), serve: servePing, grpc: pb.Cluster_Info_FullMethodName},
		{method: "GET", path: s + "diag/", skeleton: object("statistics"), serve: serveDiag, grpc: pb.Cluster_Info_FullMethodName},
		{method: "GET", path: s + "jobs/", skeleton: jobsSkeleton, serve: serveJobs, grpc: pb.Jobs_List_FullMethodName},
		{method: "DELETE", path: s + "jobs/", skeleton: list("status"), serve: serveJobsDelete, grpc: pb.Jobs_Cancel_FullMethodName},
		{method: "GET", path: s + "jobs/state/", skeleton: jobsSkeleton, serve: serveJobsState, grpc: pb.Jobs_List_FullMethodName},
		{method: "GET", path: s + "job/{job_id}", skeleton: jobsSkeleton, serve: serveJob, grpc: pb.Jobs_Get_FullMethodName},
		{method: "POST", path: s + "job/{job_id}", skeleton: none, serve: serveJobUpdate, grpc: pb.Jobs_Update_FullMethodName},
		{method: "DELETE", path: s + "job/{job_id}", skeleton: list("status"), serve: serveJobDelete, grpc: pb.Jobs_Cancel_FullMethodName},
		{method: "POST", path: s + "job/submit", skeleton: none, serve: serveSubmit, grpc: pb.Jobs_Submit_FullMethodName},
		{method: "POST", path: s + "job/allocate", skeleton: none, serve: serveAllocate, grpc: pb.Jobs_Submit_FullMethodName},
		{method: "GET", path: s + "nodes/", skeleton: withLastUpdate("nodes"), serve: serveNodes, grpc: pb.Nodes_List_FullMethodName},
		{method: "POST", path: s + "nodes/", skeleton: none, serve: serveNodesUpdate, grpc: pb.Nodes_Update_FullMethodName},
		{method: "GET", path: s + "node/{node_name}", skeleton: withLastUpdate("nodes"), serve: serveNode, grpc: pb.Nodes_Get_FullMethodName},
		{method: "POST", path: s + "node/{node_name}", skeleton: none, serve: serveNodeUpdate, grpc: pb.Nodes_Update_FullMethodName},
		{method: "DELETE", path: s + "node/{node_name}", skeleton: none, serve: serveNodeDelete, grpc: pb.Nodes_Update_FullMethodName},
		{method: "POST", path: s + "new/node/", skeleton: none, why: "Parity has no dynamic nodes (its nodes come from the cluster file): add the node to the cluster file's nodes and restart the controller"},
		{method: "GET", path: s + "partitions/", skeleton: withLastUpdate("partitions"), serve: servePartitions, grpc: pb.Cluster_Info_FullMethodName},
		{method: "GET", path: s + "partition/{partition_name}", skeleton: withLastUpdate("partitions"), serve: servePartition, grpc: pb.Cluster_Info_FullMethodName},
		{method: "GET", path: s + "reservations/", skeleton: withLastUpdate("reservations"), serve: serveReservations, grpc: pb.Reservations_List_FullMethodName},
		{method: "POST", path: s + "reservations/", skeleton: list("reservations"), serve: serveReservationsMod, grpc: pb.Reservations_Create_FullMethodName},
		{method: "GET", path: s + "reservation/{reservation_name}", skeleton: withLastUpdate("reservations"), serve: serveReservation, grpc: pb.Reservations_Get_FullMethodName},
		{method: "DELETE", path: s + "reservation/{reservation_name}", skeleton: none, serve: serveReservationDelete, grpc: pb.Reservations_Delete_FullMethodName},
		{method: "POST", path: s + "reservation", skeleton: list("reservations"), serve: serveReservationCreate, grpc: pb.Reservations_Create_FullMethodName},
		{method: "GET", path: s + "shares", skeleton: object("shares"), serve: serveShares, grpc: pb.Accounting_Shares_FullMethodName},
		{method: "GET", path: s + "licenses/", skeleton: withLastUpdate("licenses"), serve: serveLicenses, grpc: pb.Cluster_WhoAmI_FullMethodName},
		{method: "GET", path: s + "reconfigure/", skeleton: none, serve: serveReconfigure, grpc: pb.Cluster_Reconfigure_FullMethodName},
		{method: "GET", path: s + "resources/{job_id}", skeleton: list("nodes"), serve: serveResources, grpc: pb.Jobs_Get_FullMethodName},

		{method: "GET", path: db + "job/{job_id}", skeleton: list("jobs"), serve: serveDBJob, grpc: pb.Accounting_Jobs_FullMethodName},
		{method: "POST", path: db + "job/{job_id}", skeleton: list("results")},
		{method: "GET", path: db + "jobs/", skeleton: list("jobs"), serve: serveDBJobs, grpc: pb.Accounting_Jobs_FullMethodName},
		{method: "POST", path: db + "jobs/", skeleton: list("results")},
		{method: "GET", path: db + "config", skeleton: none, serve: serveDBConfig, grpc: pb.Cluster_WhoAmI_FullMethodName},
		{method: "POST", path: db + "config", skeleton: none},
		{method: "GET", path: db + "tres/", skeleton: list("TRES"), serve: serveDBTRES, grpc: pb.Cluster_WhoAmI_FullMethodName},
		{method: "POST", path: db + "tres/", skeleton: none},
		{method: "GET", path: db + "qos/{qos}", skeleton: list("qos"), serve: serveDBQOS, grpc: pb.Cluster_WhoAmI_FullMethodName},
		{method: "DELETE", path: db + "qos/{qos}", skeleton: list("removed_qos"), serve: serveDBQOSDelete, grpc: pb.AssocAdmin_Change_FullMethodName},
		{method: "GET", path: db + "qos/", skeleton: list("qos"), serve: serveDBQOS, grpc: pb.Cluster_WhoAmI_FullMethodName},
		{method: "POST", path: db + "qos/", skeleton: none, serve: serveDBQOSPost, grpc: pb.AssocAdmin_Change_FullMethodName},
		{method: "GET", path: db + "associations/", skeleton: list("associations"), serve: serveDBAssociations, grpc: pb.Cluster_WhoAmI_FullMethodName},
		{method: "POST", path: db + "associations/", skeleton: none},
		{method: "DELETE", path: db + "associations/", skeleton: list("removed_associations")},
		{method: "GET", path: db + "association/", skeleton: list("associations"), serve: serveDBAssociations, grpc: pb.Cluster_WhoAmI_FullMethodName},
		{method: "DELETE", path: db + "association/", skeleton: list("removed_associations")},
		{method: "GET", path: db + "instances/", skeleton: list("instances")},
		{method: "GET", path: db + "instance/", skeleton: list("instances")},
		{method: "GET", path: db + "user/{name}", skeleton: list("users"), serve: serveDBUser, grpc: pb.Cluster_WhoAmI_FullMethodName},
		{method: "DELETE", path: db + "user/{name}", skeleton: none, serve: serveDBUserDelete, grpc: pb.AssocAdmin_Change_FullMethodName},
		{method: "GET", path: db + "users/", skeleton: list("users"), serve: serveDBUsers, grpc: pb.Cluster_WhoAmI_FullMethodName},
		{method: "POST", path: db + "users/", skeleton: none, serve: serveDBUsersPost, grpc: pb.AssocAdmin_Change_FullMethodName},
		{method: "POST", path: db + "users_association/", skeleton: text("added_users"), serve: serveDBUsersAssoc, grpc: pb.AssocAdmin_Change_FullMethodName},
		{method: "GET", path: db + "cluster/{cluster_name}", skeleton: list("clusters"), serve: serveDBCluster, grpc: pb.Cluster_WhoAmI_FullMethodName},
		{method: "DELETE", path: db + "cluster/{cluster_name}", skeleton: list("deleted_clusters")},
		{method: "GET", path: db + "clusters/", skeleton: list("clusters"), serve: serveDBClusters, grpc: pb.Cluster_WhoAmI_FullMethodName},
		{method: "POST", path: db + "clusters/", skeleton: none},
		{method: "GET", path: db + "wckey/{id}", skeleton: list("wckeys")},
		{method: "DELETE", path: db + "wckey/{id}", skeleton: list("deleted_wckeys")},
		{method: "GET", path: db + "wckeys/", skeleton: list("wckeys")},
		{method: "POST", path: db + "wckeys/", skeleton: none},
		{method: "GET", path: db + "account/{account_name}", skeleton: list("accounts"), serve: serveDBAccount, grpc: pb.Cluster_WhoAmI_FullMethodName},
		{method: "DELETE", path: db + "account/{account_name}", skeleton: list("removed_accounts"), serve: serveDBAccountDelete, grpc: pb.AssocAdmin_Change_FullMethodName},
		{method: "GET", path: db + "accounts/", skeleton: list("accounts"), serve: serveDBAccounts, grpc: pb.Cluster_WhoAmI_FullMethodName},
		{method: "POST", path: db + "accounts/", skeleton: none, serve: serveDBAccountsPost, grpc: pb.AssocAdmin_Change_FullMethodName},
		{method: "POST", path: db + "accounts_association/", skeleton: text("added_accounts"), serve: serveDBAccountsAssoc, grpc: pb.AssocAdmin_Change_FullMethodName},
		{method: "GET", path: db + "diag/", skeleton: object("statistics"), serve: serveDBDiag, grpc: pb.Cluster_Info_FullMethodName},
		{method: "GET", path: db + "ping/", skeleton: list("pings"), serve: serveDBPing, grpc: pb.Accounting_Jobs_FullMethodName},
	}
}
