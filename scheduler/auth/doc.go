// Package auth owns Parity's authentication and the coarse authorisation
// of every gRPC call: HMAC-SHA256 signed tokens (user, role, bound node,
// issue and expiry times) made with a cluster key kept in the controller's
// state directory (created 0600; whoever can read it is an admin), a tap
// that checks a call's token from its headers before its message is read,
// and unary and stream server interceptors that refuse calls without a
// valid token (codes.Unauthenticated) and calls outside the caller's role
// (codes.PermissionDenied): only agents (and admins) use the Agent service,
// and agents use nothing else. Per-job rules (a user acts on their own jobs)
// belong to the controller, which reads the caller from the context. It may
// import grpc and the standard library; it must not import the controller,
// the client or any vendor package.
package auth
