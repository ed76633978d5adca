package rest_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/parityhpc/parity/scheduler/auth"
)

// TestReservationsCreateOrUpdate drives POST reservations/: new names
// are created, an existing one is updated in what is given, and a bad
// description anywhere in the list applies nothing.
func TestReservationsCreateOrUpdate(t *testing.T) {
	c := startCluster(t)
	alice, op := c.token(t, "alice", auth.RoleUser), c.token(t, "op", auth.RoleUser)
	start := time.Now().Add(time.Hour).Unix()
	when := map[string]any{"set": true, "number": start}
	hour := map[string]any{"set": true, "number": 60}
	two := map[string]any{"reservations": []map[string]any{
		{"name": "a", "start_time": when, "duration": hour, "node_list": []string{"n1"}, "users": []string{"alice"}},
		{"name": "b", "start_time": when, "duration": hour, "node_list": []string{"n2"}, "accounts": []string{"bio"}},
	}}
	post := func(tok string, body any) answer {
		return c.do(t, "POST", "/slurm/v0.0.44/reservations/", tok, mustJSON(t, body))
	}
	if a := post(alice, two); a.code != http.StatusForbidden {
		t.Fatalf("user creates: %d %s", a.code, a.body)
	}
	a := post(op, two)
	if made := rows(a, "reservations"); a.code != http.StatusOK || len(made) != 2 || made[1]["name"] != "b" {
		t.Fatalf("create two: %d %s", a.code, a.body)
	}
	upd := map[string]any{"reservations": []map[string]any{{"name": "a", "users": []string{"alice", "bob"}}}}
	if a := post(op, upd); a.code != http.StatusOK {
		t.Fatalf("update a: %d %s", a.code, a.body)
	}
	r := rows(c.do(t, "GET", "/slurm/v0.0.44/reservation/a", op, nil), "reservations")[0]
	if r["users"] != "alice,bob" || r["node_list"] != "n1" {
		t.Errorf("after update: users %v nodes %v, want alice,bob on n1", r["users"], r["node_list"])
	}
	bad := map[string]any{"reservations": []map[string]any{
		{"name": "c", "start_time": when, "duration": hour, "node_list": []string{"n1"}, "users": []string{"dave"}},
		{"name": "d", "node_list": []string{"n2"}},
	}}
	if a := post(op, bad); a.code != http.StatusBadRequest || !strings.Contains(a.errorText(), "reservations[1]") {
		t.Fatalf("a bad second description: %d %s; want 400 naming reservations[1]", a.code, a.body)
	}
	if n := len(rows(c.do(t, "GET", "/slurm/v0.0.44/reservations/", op, nil), "reservations")); n != 2 {
		t.Errorf("%d reservations after the refusal, want 2 (nothing applied)", n)
	}
	if a := post(op, map[string]any{"reservations": []map[string]any{{"name": "a"}}}); a.code != http.StatusBadRequest || !strings.Contains(a.errorText(), "nothing to change") {
		t.Errorf("an update with nothing: %d %s", a.code, a.body)
	}
}
