package plugin

// Regenerate the Go code under pluginv1 from proto/parity/plugin/v1. Needs
// Debian's protobuf-compiler (protoc, with the well-known types under
// /usr/include) and the Go plugins on PATH:
//
//	apt-get install -y protobuf-compiler
//	go install google.golang.org/protobuf/cmd/protoc-gen-go@v1.36.12
//	go install google.golang.org/grpc/cmd/protoc-gen-go-grpc@v1.5.1
//
//go:generate protoc -I proto --go_out=. --go_opt=module=github.com/parityhpc/parity/vendors/plugin --go-grpc_out=. --go-grpc_opt=module=github.com/parityhpc/parity/vendors/plugin parity/plugin/v1/driver.proto
