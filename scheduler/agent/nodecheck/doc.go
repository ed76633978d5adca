// Package nodecheck holds the node agent's own health checks, in the
// spirit of LBNL NHC: free space on the job spool, available memory, and a
// site-supplied check script run with a timeout. Each check returns a
// healthcheck.NodeCheck that the agent sends in its next heartbeat; the
// controller's health policy drains the node on a failure and resumes it
// once the check passes again. Checks never panic and never hang past
// their timeout. It may import healthcheck, the standard library and
// golang.org/x/sys; it must not import the controller, labs or any vendor
// package.
package nodecheck
