package rest

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// OpenAPIPath serves the OpenAPI 3 document of what Parity serves, as
// slurmrestd serves its own there.
const OpenAPIPath = "/openapi/v3"

// slurmSpec is the document Slurm 25.11's slurmrestd generates for data
// parser v0.0.44, byte for byte: the contract the operations implement.
//
//go:embed contract/slurm-openapi-v0.0.44.json
var slurmSpec []byte

// ownOperations are Parity's paths outside slurmrestd's document, with
// their operation objects: the route table and the document's source.
func ownOperations() map[string]map[string]any {
	return map[string]map[string]any{
		OpenAPIPath: {"get": map[string]any{
			"tags": []string{"openapi"}, "operationId": "parity_get_openapi_v3",
			"summary":     "this document: the operations this controller serves",
			"description": "slurmrestd's data parser v0.0.44 operations that Parity honours, as Slurm's document defines them, and Parity's own; served without a token",
			"security":    []map[string]any{{}},
			"responses": map[string]any{"200": map[string]any{"description": "OpenAPI 3 document",
				"content": map[string]any{"application/json": map[string]any{"schema": map[string]any{"type": "object"}}}}},
		}},
	}
}

// specDoc is the part of the document kept whole or rebuilt.
type specDoc struct {
	OpenAPI    string                                `json:"openapi"`
	Info       map[string]any                        `json:"info"`
	Servers    json.RawMessage                       `json:"servers"`
	Security   json.RawMessage                       `json:"security"`
	Tags       json.RawMessage                       `json:"tags"`
	Components json.RawMessage                       `json:"components"`
	Paths      map[string]map[string]json.RawMessage `json:"paths"`
}

// openAPIDocument builds the document from the route table: every
// operation Parity serves, copied from Slurm's document (so its
// parameters and schemas are the contract's), and Parity's own. An
// operation the table serves that the contract lacks is an error, so the
// document cannot drift from the routes.
func openAPIDocument(ops []operation, own []ownOp, version string) ([]byte, error) {
	var spec specDoc
	if err := json.Unmarshal(slurmSpec, &spec); err != nil {
		return nil, fmt.Errorf("rest: embedded OpenAPI document: %w", err)
	}
	paths := map[string]map[string]any{}
	for _, op := range ops {
		if op.serve == nil {
			continue
		}
		method := strings.ToLower(op.method)
		o, ok := spec.Paths[op.path][method]
		if !ok {
			return nil, fmt.Errorf("rest: route %s %s is not in slurmrestd's document", op.method, op.path)
		}
		if paths[op.path] == nil {
			paths[op.path] = map[string]any{}
		}
		paths[op.path][method] = o
	}
	for p, item := range ownOperations() {
		paths[p] = item
	}
	components, err := addOwnOperations(paths, spec.Components, own)
	if err != nil {
		return nil, err
	}
	info := spec.Info
	info["title"] = "Parity: slurmrestd API (data parser " + DataParser + ")"
	info["description"] = "The slurmrestd operations a Parity controller serves, as Slurm's own document defines them, and Parity's own paths"
	info["version"] = "parity " + version
	delete(info, "contact")
	return json.Marshal(map[string]any{"openapi": spec.OpenAPI, "info": info, "servers": spec.Servers, "security": spec.Security,
		"tags": spec.Tags, "components": components, "paths": paths})
}

// addOwnOperations puts Parity's /parity/v1/ operations in paths, and
// their response schemas (parity_v1_<operation>_resp, derived from the
// Go types the answers are encoded from) beside Slurm's components.
func addOwnOperations(paths map[string]map[string]any, components json.RawMessage, own []ownOp) (map[string]any, error) {
	var comp map[string]any
	if err := json.Unmarshal(components, &comp); err != nil {
		return nil, fmt.Errorf("rest: embedded OpenAPI components: %w", err)
	}
	schemas, ok := comp["schemas"].(map[string]any)
	if !ok {
		return nil, fmt.Errorf("rest: embedded OpenAPI document has no component schemas")
	}
	for _, o := range own {
		name := o.id + "_resp"
		if _, dup := schemas[name]; dup {
			return nil, fmt.Errorf("rest: schema %s is already in the document", name)
		}
		schemas[name] = schemaOf(o.resp)
		ref := map[string]any{"$ref": "#/components/schemas/" + name}
		content := map[string]any{ContentType: map[string]any{"schema": ref}}
		op := map[string]any{"tags": []string{"parity"}, "operationId": o.id, "summary": o.summary, "description": o.description,
			"responses": map[string]any{"200": map[string]any{"description": o.summary, "content": content},
				"default": map[string]any{"description": "the error, in the same schema with errors set", "content": content}}}
		if len(o.params) > 0 {
			op["parameters"] = o.params
		}
		if paths[o.path] == nil {
			paths[o.path] = map[string]any{}
		}
		paths[o.path][strings.ToLower(o.method)] = op
	}
	return comp, nil
}

// serveOpenAPI answers the document (built once, in New).
func (h *Handler) serveOpenAPI(w http.ResponseWriter, r *http.Request) {
	c := &call{r: r, w: w}
	if r.Method != http.MethodGet {
		w.Header().Set("Allow", http.MethodGet)
		h.writeError(c, none(), status.Errorf(codes.Unimplemented, "%s %s: method not allowed (GET only)", r.Method, r.URL.Path))
		return
	}
	if h.docErr != nil {
		h.writeError(c, none(), status.Error(codes.Internal, h.docErr.Error()))
		return
	}
	w.Header().Set("Content-Type", ContentType)
	w.Write(h.doc)
}
