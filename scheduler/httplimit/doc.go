// Package httplimit bounds what an HTTP server gives a client: how long
// its headers, its whole request and its idle keep-alive may take, and how
// large a request body may be, on every path (the controller's HTTP API
// and metrics, the agent's metrics). It imports the standard library only.
package httplimit
