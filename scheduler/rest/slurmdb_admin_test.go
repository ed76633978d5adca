package rest_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/auth"
	"github.com/parityhpc/parity/scheduler/client"
)

// slurmdbd's writes change the run-time accounting state as sacctmgr
// does: admins, and operators for accounts and users (a user, and an
// operator writing QOS, are refused as over gRPC);
// accounts under a parent, users with their default account, QOS with
// priority, DENY_LIMIT and a MaxWall limit; the reads answer from the
// state in force and the change is durable in the controller; removals
// say what went and "Nothing deleted" when nothing matched. Every
// request and answer is checked against slurmrestd's document.
func TestSlurmDBWrites(t *testing.T) {
	c := startCluster(t)
	root, alice, op := c.token(t, "root", auth.RoleAdmin), c.token(t, "alice", auth.RoleUser), c.token(t, "op", auth.RoleOperator)
	const db = "/slurmdb/v0.0.44/"
	post := func(tok, path, body string) answer { return c.do(t, "POST", db+path, tok, []byte(body)) }
	ok := func(a answer, what string) {
		t.Helper()
		if a.code != http.StatusOK {
			t.Fatalf("%s: %d %s", what, a.code, a.body)
		}
	}
	// A user writes nothing; an operator writes accounts and users but
	// not QOS (Slurm 22.05's AdminLevel=Operator).
	if a := post(alice, "accounts/", `{"accounts":[{"name":"x","description":"d","organization":"o"}]}`); a.code != http.StatusForbidden {
		t.Errorf("a user's POST accounts/: %d %s", a.code, a.body)
	}
	if a := post(op, "qos/", `{"qos":[{"name":"x"}]}`); a.code != http.StatusForbidden {
		t.Errorf("an operator's POST qos/: %d %s", a.code, a.body)
	}
	ok(post(root, "accounts_association/", `{"association_condition":{"accounts":["chem"],"association":{"parent":"physics","fairshare":3}},
		"account":{"description":"Chemistry","organization":"sci"}}`), "accounts_association")
	ok(post(op, "accounts/", `{"accounts":[{"name":"bio","description":"Biology","organization":"life"}]}`), "an operator's update of bio")
	a := c.do(t, "GET", db+"accounts/", alice, nil)
	if got := names(a, "accounts", "name") + " " + names(a, "accounts", "description"); got != "physics,bio,chem physics,Biology,Chemistry" {
		t.Errorf("accounts after the writes: %s", got)
	}
	ok(post(root, "users/", `{"users":[{"name":"erin","associations":[{"account":"chem","user":"erin"},{"account":"bio","user":"erin"}],
		"default":{"account":"chem"}}]}`), "users")
	u := c.do(t, "GET", db+"user/erin", op, nil)
	if rows(u, "users")[0]["default"].(map[string]any)["account"] != "chem" {
		t.Errorf("erin's default account: %s", u.body)
	}
	ok(post(root, "qos/", `{"qos":[{"name":"gpuq","priority":{"set":true,"number":7},"flags":["DENY_LIMIT"],
		"limits":{"max":{"wall_clock":{"per":{"job":{"set":true,"number":30}}},"jobs":{"active_jobs":{"per":{"user":{"set":true,"number":2}}}}}}}]}`), "qos")
	q := c.do(t, "GET", db+"qos/gpuq", alice, nil)
	r := rows(q, "qos")[0]
	if r["priority"].(map[string]any)["number"] != 7.0 || !slices.Equal(toStrings(r["flags"]), []string{"DENY_LIMIT"}) {
		t.Errorf("gpuq: %s", q.body)
	}
	// GET answers the limits in force, in the shape POST takes them; an
	// unset one is INFINITE, as slurmrestd sends it.
	max := r["limits"].(map[string]any)["max"].(map[string]any)
	at := func(m map[string]any, path ...string) map[string]any {
		for _, k := range path {
			m = m[k].(map[string]any)
		}
		return m
	}
	if w, u, g := at(max, "wall_clock", "per", "job"), at(max, "jobs", "active_jobs", "per", "user"), at(max, "active_jobs", "count"); w["number"] != 30.0 || w["set"] != true ||
		u["number"] != 2.0 || g["infinite"] != true || g["set"] != false {
		t.Errorf("gpuq's limits: MaxWall %v, MaxJobsPerUser %v, GrpJobs %v", w, u, g)
	}
	cl, err := client.Dial(context.Background(), c.ctrl.Addr(), alice)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	tab, err := cl.AssocTable(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(tab.GetQos(), func(q *pb.AssocQOS) bool {
		return q.GetName() == "gpuq" && q.GetLimits() == "MaxJobs=2 MaxWall=00:30:00"
	}) {
		t.Errorf("the controller's QOS after POST qos/: %v", tab.GetQos())
	}
	// A TRES limit set through sacctmgr's service reads back with the
	// TRES's id.
	rootCl, err := client.Dial(context.Background(), c.ctrl.Addr(), root)
	if err != nil {
		t.Fatal(err)
	}
	defer rootCl.Close()
	if _, err := rootCl.ChangeAssoc(context.Background(), &pb.AssocChangeRequest{Action: "modify", Entity: "qos", Names: []string{"gpuq"},
		Set: []string{"GrpTRES=gres/gpu=4,cpu=8"}}); err != nil {
		t.Fatal(err)
	}
	q = c.do(t, "GET", db+"qos/gpuq", alice, nil)
	total := rows(q, "qos")[0]["limits"].(map[string]any)["max"].(map[string]any)["tres"].(map[string]any)["total"]
	if got := fmt.Sprint(total); got != "[map[count:8 id:1 type:cpu] map[count:4 id:1001 name:gpu type:gres]]" {
		t.Errorf("gpuq's GrpTRES: %s", got)
	}
	if a := post(root, "qos/", `{"qos":[{"name":"gpuq","flags":["NO_RESERVE"]}]}`); a.code != http.StatusBadRequest || !strings.Contains(a.errorText(), "NO_RESERVE") {
		t.Errorf("an unknown flag: %d %s", a.code, a.body)
	}
	ok(c.do(t, "DELETE", db+"user/erin", root, nil), "delete erin")
	if a := c.do(t, "DELETE", db+"account/chem", root, nil); a.code != http.StatusOK || !slices.Equal(toStrings(a.obj["removed_accounts"]), []string{"chem"}) {
		t.Errorf("delete chem: %d %s", a.code, a.body)
	}
	ok(c.do(t, "DELETE", db+"qos/gpuq", root, nil), "delete gpuq")
	if a := c.do(t, "DELETE", db+"qos/gpuq", root, nil); a.code != http.StatusNotFound || !strings.Contains(a.errorText(), "Nothing deleted") {
		t.Errorf("deleting it again: %d %s", a.code, a.body)
	}
	if a := c.do(t, "GET", db+"accounts/", alice, nil); names(a, "accounts", "name") != "physics,bio" {
		t.Errorf("accounts after the deletes: %s", names(a, "accounts", "name"))
	}
}

func toStrings(v any) []string {
	var out []string
	for _, x := range v.([]any) {
		out = append(out, x.(string))
	}
	return out
}
