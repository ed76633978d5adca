package rest_test

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/auth"
	"github.com/parityhpc/parity/scheduler/client"
)

// slurmdbd's writes change the run-time accounting state as sacctmgr
// does: admins only (a user and an operator are refused as over gRPC);
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
	for _, tok := range []string{alice, op} {
		if a := post(tok, "accounts/", `{"accounts":[{"name":"x","description":"d","organization":"o"}]}`); a.code != http.StatusForbidden {
			t.Errorf("a non-admin's POST accounts/: %d %s", a.code, a.body)
		}
	}
	ok(post(root, "accounts_association/", `{"association_condition":{"accounts":["chem"],"association":{"parent":"physics","fairshare":3}},
		"account":{"description":"Chemistry","organization":"sci"}}`), "accounts_association")
	ok(post(root, "accounts/", `{"accounts":[{"name":"bio","description":"Biology","organization":"life"}]}`), "update bio")
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
