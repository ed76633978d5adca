// Package rest serves slurmrestd's REST API, data parser v0.0.44, over
// the controller's own services, so clients written against Slurm 25.11's
// OpenAPI document (portals, exporters, operators) work unchanged.
//
// The contract is the document slurmrestd generates
// (testdata/slurm-openapi-v0.0.44.json, a byte-for-byte copy of
// ../shared/reference/slurmrestd/): every one of its 41 paths is routed,
// with and without the trailing slash. An operation Parity honours calls
// the controller's gRPC service in process, with the identity the
// controller's authenticator gives the request's token, so authorisation
// is the services' own (Jobs, Nodes, Cluster, Reservations and
// Accounting); the /slurmdb/ paths read the ledger through Accounting
// and slurmdbd's static records (accounts, users, QOS, TRES, the
// cluster) from the cluster file; one it does not honour yet answers 501 in the
// operation's own schema with the error envelope. Every answer, errors
// included, is the operation's response schema with meta, errors and
// warnings, as slurmrestd answers.
package rest
