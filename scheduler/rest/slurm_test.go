package rest_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/parityhpc/parity/gres"
	"github.com/parityhpc/parity/scheduler/api"
	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/auth"
	"github.com/parityhpc/parity/scheduler/client"
	"github.com/parityhpc/parity/scheduler/controller"
	"github.com/parityhpc/parity/topology"
)

// grpc dials the controller's gRPC side as user with role.
func (c *cluster) grpc(tb testing.TB, user string, role auth.Role) *client.Client {
	tb.Helper()
	cl, err := client.Dial(context.Background(), c.ctrl.Addr(), c.token(tb, user, role))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { cl.Close() })
	return cl
}

func rows(a answer, key string) []map[string]any {
	var out []map[string]any
	list, _ := a.obj[key].([]any)
	for _, r := range list {
		out = append(out, r.(map[string]any))
	}
	return out
}

// TestReservations reads a reservation made over gRPC through the REST
// paths, and deletes it as an operator only.
func TestReservations(t *testing.T) {
	c := startCluster(t)
	start := time.Now().Add(time.Hour).Truncate(time.Second)
	_, err := c.grpc(t, "root", auth.RoleAdmin).CreateReservation(context.Background(), &pb.ReservationSpec{Name: "maint",
		StartTime: api.Timestamp(start), DurationSeconds: 3600, Nodes: "n[1-2]", Users: []string{"alice", "bob"}, Flags: []string{"MAINT"}})
	if err != nil {
		t.Fatal(err)
	}
	alice, op := c.token(t, "alice", auth.RoleUser), c.token(t, "op", auth.RoleUser)
	for _, path := range []string{"/slurm/v0.0.44/reservations/", "/slurm/v0.0.44/reservation/maint"} {
		a := c.do(t, "GET", path, alice, nil)
		rs := rows(a, "reservations")
		if a.code != http.StatusOK || len(rs) != 1 {
			t.Fatalf("%s: %d %s", path, a.code, a.body)
		}
		r := rs[0]
		want := map[string]any{"name": "maint", "node_list": "n[1-2]", "node_count": 2.0, "users": "alice,bob", "flags": []any{"MAINT"}}
		for k, v := range want {
			if fmt.Sprint(r[k]) != fmt.Sprint(v) {
				t.Errorf("%s: %s = %v, want %v", path, k, r[k], v)
			}
		}
		if st, end := r["start_time"].(map[string]any), r["end_time"].(map[string]any); st["number"] != float64(start.Unix()) || end["number"] != float64(start.Unix()+3600) {
			t.Errorf("%s: start %v end %v, want %d and an hour later", path, st, end, start.Unix())
		}
	}
	if a := c.do(t, "GET", "/slurm/v0.0.44/reservation/nosuch", alice, nil); a.code != http.StatusNotFound || !strings.Contains(a.errorText(), "nosuch") {
		t.Fatalf("unknown reservation: %d %s", a.code, a.body)
	}
	if a := c.do(t, "DELETE", "/slurm/v0.0.44/reservation/maint", alice, nil); a.code != http.StatusForbidden || !strings.Contains(a.errorText(), "needs an operator") {
		t.Fatalf("user deletes: %d %s", a.code, a.body)
	}
	if a := c.do(t, "DELETE", "/slurm/v0.0.44/reservation/maint", op, nil); a.code != http.StatusOK {
		t.Fatalf("operator deletes: %d %s", a.code, a.body)
	}
	if a := c.do(t, "GET", "/slurm/v0.0.44/reservations/", alice, nil); len(rows(a, "reservations")) != 0 {
		t.Fatalf("after delete: %s", a.body)
	}
}

// TestReservationCreate makes reservations through POST reservation, by
// nodes and by a TRES amount, as an operator only, and refuses what
// Parity cannot honour without making anything.
func TestReservationCreate(t *testing.T) {
	c := startCluster(t)
	alice, op := c.token(t, "alice", auth.RoleUser), c.token(t, "op", auth.RoleUser)
	start := time.Now().Add(time.Hour).Unix()
	when := map[string]any{"set": true, "number": start}
	byNodes := map[string]any{"name": "train", "start_time": when, "duration": map[string]any{"set": true, "number": 90},
		"node_list": []string{"n1"}, "users": []string{"alice"}, "flags": []string{"MAINT"}}
	if a := c.do(t, "POST", "/slurm/v0.0.44/reservation", alice, mustJSON(t, byNodes)); a.code != http.StatusForbidden {
		t.Fatalf("user creates: %d %s", a.code, a.body)
	}
	a := c.do(t, "POST", "/slurm/v0.0.44/reservation", op, mustJSON(t, byNodes))
	if made := rows(a, "reservations"); a.code != http.StatusOK || len(made) != 1 || made[0]["name"] != "train" || fmt.Sprint(made[0]["node_list"]) != "[n1]" {
		t.Fatalf("operator creates by nodes: %d %s", a.code, a.body)
	}
	r := rows(c.do(t, "GET", "/slurm/v0.0.44/reservation/train", alice, nil), "reservations")[0]
	if r["node_list"] != "n1" || r["end_time"].(map[string]any)["number"] != float64(start+90*60) || fmt.Sprint(r["flags"]) != "[MAINT]" {
		t.Errorf("reservation train: %v", r)
	}
	// A TRES amount is placed on devices, so n2 reports its inventory first.
	if _, err := c.grpcAgent(t, "n2").Register(context.Background(), &pb.RegisterRequest{Node: "n2", Inventory: api.InventoryToProto(inventory("n2")), AgentVersion: "test"}); err != nil {
		t.Fatal(err)
	}
	byTRES := map[string]any{"name": "gpus", "start_time": when, "duration": map[string]any{"set": true, "number": 30}, "partition": "gpu",
		"tres": []map[string]any{{"type": "gres", "name": "gpu", "count": 2}}, "accounts": []string{"bio"}}
	if a := c.do(t, "POST", "/slurm/v0.0.44/reservation", op, mustJSON(t, byTRES)); a.code != http.StatusOK {
		t.Fatalf("operator creates by TRES: %d %s", a.code, a.body)
	}
	r = rows(c.do(t, "GET", "/slurm/v0.0.44/reservation/gpus", alice, nil), "reservations")[0]
	if r["tres"] != "gres/gpu=2" || r["accounts"] != "bio" {
		t.Errorf("reservation gpus: tres %v accounts %v", r["tres"], r["accounts"])
	}
	c.skipRequestCheck = true
	bad := []struct{ name, body, want string }{
		{"a property Parity cannot honour", `{"name":"x","start_time":{"set":true,"number":4102444800},"node_list":["n2"],"users":["bob"],"core_count":{"set":true,"number":4}}`, `"core_count"`},
		{"no start", `{"name":"x","node_list":["n2"],"users":["bob"]}`, "start_time"},
		{"a bad TRES", `{"name":"x","start_time":{"set":true,"number":4102444800},"tres":[{"type":"gres","count":0}],"users":["bob"]}`, "tres[0]"},
		{"not an object", `[]`, "reservation_desc_msg"},
	}
	for _, tt := range bad {
		if a := c.do(t, "POST", "/slurm/v0.0.44/reservation", op, []byte(tt.body)); a.code != http.StatusBadRequest || !strings.Contains(a.errorText(), tt.want) {
			t.Errorf("%s: %d %s; want 400 naming %s", tt.name, a.code, a.body, tt.want)
		}
	}
	c.skipRequestCheck = false
	if n := len(rows(c.do(t, "GET", "/slurm/v0.0.44/reservations/", op, nil), "reservations")); n != 2 {
		t.Errorf("%d reservations after the refusals, want 2", n)
	}
}

// TestLicenses: Parity configures no licenses, so the list is empty.
func TestLicenses(t *testing.T) {
	c := startCluster(t)
	a := c.do(t, "GET", "/slurm/v0.0.44/licenses/", c.token(t, "alice", auth.RoleUser), nil)
	if a.code != http.StatusOK || len(rows(a, "licenses")) != 0 {
		t.Fatalf("licenses: %d %s", a.code, a.body)
	}
}

// TestShares reads sshare's rows: a user sees the accounts and their own
// user row, an operator everyone's; accounts and users narrow them.
func TestShares(t *testing.T) {
	c := startCluster(t)
	names := func(tok, query string) string {
		a := c.do(t, "GET", "/slurm/v0.0.44/shares"+query, tok, nil)
		if a.code != http.StatusOK {
			t.Fatalf("shares%s: %d %s", query, a.code, a.body)
		}
		var out []string
		for _, r := range a.obj["shares"].(map[string]any)["shares"].([]any) {
			m := r.(map[string]any)
			out = append(out, fmt.Sprintf("%s/%s:%s", m["parent"], m["name"], m["type"].([]any)[0]))
		}
		if tot := a.obj["shares"].(map[string]any)["total_shares"]; tot != 100.0 {
			t.Errorf("total_shares %v, want 100 (physics 40 + bio 60)", tot)
		}
		return strings.Join(out, " ")
	}
	alice, op := c.token(t, "alice", auth.RoleUser), c.token(t, "op", auth.RoleUser)
	tests := []struct{ who, tok, query, want string }{
		{"user", alice, "", "/root:ASSOCIATION root/bio:ASSOCIATION root/physics:ASSOCIATION physics/alice:USER"},
		{"operator", op, "", "/root:ASSOCIATION root/bio:ASSOCIATION bio/dave:USER root/physics:ASSOCIATION physics/alice:USER physics/bob:USER"},
		{"operator, one user", op, "?users=bob", "physics/bob:USER"},
		{"operator, one account", op, "?accounts=bio", "root/bio:ASSOCIATION bio/dave:USER"},
	}
	for _, tt := range tests {
		if got := names(tt.tok, tt.query); got != tt.want {
			t.Errorf("%s%s: rows %q, want %q", tt.who, tt.query, got, tt.want)
		}
	}
}

// TestNodeDelete: Parity's nodes come from the cluster file, so DELETE is
// refused with a reason for an admin, denied to others, and changes nothing.
func TestNodeDelete(t *testing.T) {
	c := startCluster(t)
	tests := []struct {
		name, who, node string
		code            int
		want            string
	}{
		{"user", "alice", "n1", http.StatusForbidden, "needs an admin"},
		{"operator", "op", "n1", http.StatusForbidden, "needs an admin"},
		{"admin, configured node", "root", "n1", http.StatusBadRequest, "configured in the cluster file"},
		{"admin, unknown node", "root", "nosuch", http.StatusNotFound, "nosuch"},
	}
	for _, tt := range tests {
		a := c.do(t, "DELETE", "/slurm/v0.0.44/node/"+tt.node, c.token(t, tt.who, auth.RoleUser), nil)
		if a.code != tt.code || !strings.Contains(a.errorText(), tt.want) {
			t.Errorf("%s: %d %s; want %d with %q", tt.name, a.code, a.body, tt.code, tt.want)
		}
	}
	if a := c.do(t, "GET", "/slurm/v0.0.44/nodes/", c.token(t, "op", auth.RoleUser), nil); len(rows(a, "nodes")) != 2 {
		t.Fatalf("nodes after refused deletes: %s", a.body)
	}
}

// inventory is a node of the lab file: 16 CPUs, 64 GiB, four h100.
func inventory(node string) gres.Inventory {
	all := topology.CPURange(0, 15)
	inv := gres.Inventory{Vendor: "sim", Host: &gres.Host{Hostname: node, CPUs: all, Cores: 16, Sockets: 1, MemoryBytes: 64 << 30,
		NUMA: []topology.NUMANode{{ID: 0, CPUs: all, MemoryBytes: 64 << 30}}}}
	for i := range 4 {
		inv.Devices = append(inv.Devices, gres.Device{UUID: fmt.Sprintf("GPU-%s-%d", node, i), Vendor: "sim", Type: "h100", Index: i, LocalCPUs: all})
	}
	return inv
}

// TestResources: a running job's layout names its node, CPUs, memory
// and the GPUs it holds by index; a pending job holds none; another
// user's job is unknown.
func TestResources(t *testing.T) {
	c := startClusterWith(t, func(o *controller.Options) { o.NoScheduler = false })
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	agent := c.grpcAgent(t, "n1")
	if _, err := agent.Register(ctx, &pb.RegisterRequest{Node: "n1", Inventory: api.InventoryToProto(inventory("n1")), AgentVersion: "test"}); err != nil {
		t.Fatal(err)
	}
	orders, err := agent.Orders(ctx, "n1")
	if err != nil {
		t.Fatal(err)
	}
	alice := c.token(t, "alice", auth.RoleUser)
	id := c.submit(t, alice, "layout")
	for {
		o, err := orders.Recv() // the launch order: the job holds its allocation
		if err != nil {
			t.Fatal(err)
		}
		if o.GetKind() == "launch" && o.GetJobId() == uint64(id) {
			break
		}
	}
	a := c.do(t, "GET", fmt.Sprintf("/slurm/v0.0.44/resources/%d", id), alice, nil)
	nodes := rows(a, "nodes")
	if a.code != http.StatusOK || len(nodes) != 1 {
		t.Fatalf("resources: %d %s", a.code, a.body)
	}
	n := nodes[0]
	if n["node"] != "n1" || n["mem_alloc"] != 1024.0 || n["core_bitmap"] != "0-3" {
		t.Errorf("layout: node %v mem_alloc %v core_bitmap %v", n["node"], n["mem_alloc"], n["core_bitmap"])
	}
	g := n["gres"].([]any)
	if len(g) != 1 || g[0].(map[string]any)["type"] != "h100" || g[0].(map[string]any)["count"] != 1.0 || g[0].(map[string]any)["index"] != "0" {
		t.Errorf("gres %v, want one h100", g)
	}
	bob := c.token(t, "bob", auth.RoleUser)
	if a := c.do(t, "GET", fmt.Sprintf("/slurm/v0.0.44/resources/%d", id), bob, nil); a.code != http.StatusNotFound {
		t.Errorf("another user's job: %d %s", a.code, a.body)
	}
	// Submitted held, so the scheduler cannot start it before the query.
	body := submitBody("waiting")
	body["job"].(map[string]any)["hold"] = true
	a = c.do(t, "POST", "/slurm/v0.0.44/job/submit", alice, mustJSON(t, body))
	held := int(a.obj["job_id"].(float64))
	if a := c.do(t, "GET", fmt.Sprintf("/slurm/v0.0.44/resources/%d", held), alice, nil); a.code != http.StatusBadRequest || !strings.Contains(a.errorText(), "holds no resources") {
		t.Errorf("pending job: %d %s", a.code, a.body)
	}
}

func (c *cluster) grpcAgent(tb testing.TB, node string) *client.Client {
	tb.Helper()
	tok, err := auth.Sign(c.ctrl.Key(), auth.Claims{User: node, Role: auth.RoleAgent, Node: node, IssuedAt: time.Now()})
	if err != nil {
		tb.Fatal(err)
	}
	cl, err := client.Dial(context.Background(), c.ctrl.Addr(), tok)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { cl.Close() })
	return cl
}
