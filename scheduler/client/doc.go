// Package client is the Go client of Parity's controller, used by the
// command line, the node agent and the conformance suite: Dial with an
// address and a token, then call methods that mirror the gRPC services
// (Jobs, Nodes, Cluster, Agent) and take and return the parity.v1 wire
// messages. It also resolves the token (--token, PARITY_TOKEN,
// ~/.config/parity/token) and the controller address (--controller,
// PARITY_CONTROLLER). Errors are gRPC status errors; Message extracts the
// text to show a person. It may import scheduler/api, scheduler/auth and
// grpc; it must not import the controller, the agent, core or any vendor.
package client
