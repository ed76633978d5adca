// Package sbatch is `parity submit` (sbatch) without gRPC: reading the
// command line, the SBATCH_* environment and the script into a resolved
// request (jobspec), what --parse-only prints, and a submission over the
// controller's HTTP/JSON endpoint. The user verbs' submit (gRPC, in
// cmd/internal/userverbs) parses and prints through the same functions,
// so both behave alike; cmd/parity-sbatch runs Run as its whole program.
// It imports the standard library, jobspec, jsonapi, clientenv and
// jsonsubmit only, never gRPC, protobuf or cobra: every package linked in
// costs its initialisation on each sbatch process
// (cmd/parity-sbatch's TestLeanImports enforces it).
package sbatch
