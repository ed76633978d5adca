// Package jsonapi is the HTTP/JSON face of the controller's job submission:
// the request and response bodies of POST /v1/jobs in the proto3 JSON form
// of parity.v1's SubmitRequest and SubmitResponse, as plain Go structs, and
// the conversion of a resolved sbatch request (scheduler/jobspec) into them.
// It exists so that a submitting process (sbatch in a loop) links neither
// gRPC nor protobuf: it imports the standard library and jobspec only, and
// must not import the generated code, the protobuf runtime or gRPC. The
// controller decodes these bodies with protojson into the same messages
// its gRPC Submit takes; scheduler/api checks the two stay field for field
// the same.
package jsonapi
