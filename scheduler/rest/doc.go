// Package rest serves slurmrestd's REST API, data parser v0.0.44, over
// the controller's own services, so clients written against Slurm 25.11's
// OpenAPI document (portals, exporters, operators) work unchanged.
//
// The contract is the document slurmrestd generates
// (contract/slurm-openapi-v0.0.44.json, embedded, a byte-for-byte copy of
// ../shared/reference/slurmrestd/): every one of its 41 paths is routed,
// with and without the trailing slash. An operation Parity honours calls
// the controller's gRPC service in process, with the identity the
// controller's authenticator gives the request's token, so authorisation
// is the services' own (Jobs, Nodes, Cluster, Reservations and
// Accounting). The /slurmdb/ paths read the ledger through Accounting,
// and slurmdbd's static records (accounts, users, QOS, TRES, the
// cluster) from the cluster file. An operation Parity does not honour
// yet answers 501 in its own schema with the error envelope. Every
// answer, errors included, is the operation's response schema with meta,
// errors and warnings, as slurmrestd answers.
//
// OpenAPIPath serves the document of what is honoured, built from the
// route table: the contract's operation objects for the routes served,
// and Parity's own paths.
package rest
