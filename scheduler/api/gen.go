package api

// Regenerate the Go code under parityv1 from parity/v1/*.proto. Needs
// Debian's protobuf-compiler (protoc, with the well-known types under
// /usr/include) and the Go plugins on PATH:
//
//	apt-get install -y protobuf-compiler
//	go install google.golang.org/protobuf/cmd/protoc-gen-go@v1.36.12
//	go install google.golang.org/grpc/cmd/protoc-gen-go-grpc@v1.5.1
//
//go:generate protoc -I . --go_out=. --go_opt=module=github.com/parityhpc/parity/scheduler/api --go-grpc_out=. --go-grpc_opt=module=github.com/parityhpc/parity/scheduler/api parity/v1/types.proto parity/v1/jobs.proto parity/v1/nodes.proto parity/v1/cluster.proto parity/v1/agent.proto parity/v1/reservations.proto parity/v1/accounting.proto parity/v1/steps.proto parity/v1/controllers.proto parity/v1/assoc_admin.proto
