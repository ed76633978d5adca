// Package fromjobspec turns a resolved sbatch request (scheduler/jobspec)
// into the parity.v1 JobSpec the controller's Submit takes: the command
// line parses scripts and options client-side and sends structured fields,
// the script text and the environment. It is a separate package so the
// client proper does not depend on jobspec. It may import jobspec, api and
// the generated code only.
package fromjobspec
