package userverbs

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"reflect"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/parityhpc/parity/scheduler/auth"
)

// slurmSpec is slurmrestd's v0.0.44 document: the repository's copy,
// which scheduler/rest's TestContractCopy keeps byte for byte equal to
// ../shared/reference/slurmrestd/slurm-openapi-v0.0.44.json.
const slurmSpec = "../../../scheduler/rest/contract/slurm-openapi-v0.0.44.json"

func loadSlurmSpec(t *testing.T) *openapi3.T {
	t.Helper()
	doc, err := openapi3.NewLoader().LoadFromFile(slurmSpec)
	if err != nil {
		t.Fatalf("load %s: %v", slurmSpec, err)
	}
	return doc
}

// slurmJSONOf decodes out and validates it against the document's
// schema (a response schema: v0.0.44_openapi_…_resp).
func slurmJSONOf(t *testing.T, doc *openapi3.T, schema, what, out string) map[string]any {
	t.Helper()
	ref := doc.Components.Schemas[schema]
	if ref == nil || ref.Value == nil {
		t.Fatalf("%s is not in %s", schema, slurmSpec)
	}
	var v map[string]any
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("%s: not JSON: %v\n%s", what, err, out)
	}
	if err := ref.Value.VisitJSON(v, openapi3.MultiErrors()); err != nil {
		t.Fatalf("%s breaks %s: %v\n%s", what, schema, err, out)
	}
	for _, k := range []string{"meta", "errors", "warnings"} {
		if _, ok := v[k]; !ok {
			t.Fatalf("%s has no %q", what, k)
		}
	}
	return v
}

// restAnswer is GET path's answer from the controller's REST API.
func restAnswer(t *testing.T, cl *cliCluster, token, path string) map[string]any {
	t.Helper()
	req, err := http.NewRequestWithContext(context.Background(), "GET", "http://"+cl.c.Addr()+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-SLURM-USER-TOKEN", token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %v %s", path, resp.StatusCode, err, body)
	}
	var v map[string]any
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// TestSlurmJSON: squeue, scontrol show job/node/partition and sinfo
// --json print slurmrestd's v0.0.44 response objects, valid against the
// document, with the very records the REST API answers.
func TestSlurmJSON(t *testing.T) {
	cl := startCLICluster(t)
	cl.register("n1", 4)
	alice := cl.as("alice", nil)
	cl.ok(alice, "sbatch", "-J", "train", "--comment", "short run", "--gres=gpu:h100:1", "--wrap", "x")
	cl.ok(alice, "sbatch", "--array=1-4%2", "--hold", "--wrap", "y")
	doc := loadSlurmSpec(t)
	tok := cl.token("alice", auth.RoleUser, "")

	q := slurmJSONOf(t, doc, "v0.0.44_openapi_job_info_resp", "squeue --json", cl.ok(alice, "squeue", "--json"))
	jobs := q["jobs"].([]any)
	first := jobs[0].(map[string]any)
	if len(jobs) != 2 || first["job_id"] != 1.0 || first["name"] != "train" || first["comment"] != "short run" ||
		first["user_name"] != "alice" || first["job_state"].([]any)[0] != "PENDING" || first["tres_per_node"] != "gres/gpu:h100:1" {
		t.Errorf("squeue --json jobs: %v", jobs)
	}
	if arr := jobs[1].(map[string]any); arr["array_task_string"] != "1-4%2" || arr["hold"] != true || arr["state_reason"] != "JobHeldUser" {
		t.Errorf("squeue --json array: %v", arr)
	}
	if rest := restAnswer(t, cl, tok, "/slurm/v0.0.44/jobs/"); !reflect.DeepEqual(rest["jobs"], q["jobs"]) {
		t.Errorf("squeue --json jobs differ from GET jobs:\n%v\n%v", q["jobs"], rest["jobs"])
	}
	sj := slurmJSONOf(t, doc, "v0.0.44_openapi_job_info_resp", "scontrol show job 1 --json", cl.ok(alice, "scontrol", "--json", "show", "job", "1"))
	if j := sj["jobs"].([]any); len(j) != 1 || !reflect.DeepEqual(j[0], first) {
		t.Errorf("scontrol show job 1 --json: %v, want squeue's %v", j, first)
	}

	si := slurmJSONOf(t, doc, "v0.0.44_openapi_nodes_resp", "sinfo --json", cl.ok(alice, "sinfo", "--json"))
	nodes := si["nodes"].([]any)
	if len(nodes) != 2 || nodes[0].(map[string]any)["name"] != "n1" || nodes[0].(map[string]any)["gres"] != "gpu:h100:4" {
		t.Errorf("sinfo --json nodes: %v", nodes)
	}
	if rest := restAnswer(t, cl, tok, "/slurm/v0.0.44/nodes/"); !reflect.DeepEqual(rest["nodes"], si["nodes"]) {
		t.Errorf("sinfo --json nodes differ from GET nodes:\n%v\n%v", si["nodes"], rest["nodes"])
	}
	sn := slurmJSONOf(t, doc, "v0.0.44_openapi_nodes_resp", "scontrol show node n1 --json", cl.ok(alice, "scontrol", "--json", "show", "node", "n1"))
	if n := sn["nodes"].([]any); len(n) != 1 || !reflect.DeepEqual(n[0], nodes[0]) {
		t.Errorf("scontrol show node n1 --json: %v", n)
	}

	sp := slurmJSONOf(t, doc, "v0.0.44_openapi_partition_resp", "scontrol show partition --json", cl.ok(alice, "scontrol", "--json", "show", "partition"))
	if rest := restAnswer(t, cl, tok, "/slurm/v0.0.44/partitions/"); !reflect.DeepEqual(rest["partitions"], sp["partitions"]) || len(sp["partitions"].([]any)) != 2 {
		t.Errorf("scontrol show partition --json differs from GET partitions:\n%v\n%v", sp["partitions"], rest["partitions"])
	}
}
