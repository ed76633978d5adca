package controller

import (
	"crypto/tls"
	"fmt"
)

// serverTLS loads the listener's certificate and key; nil (plain TCP)
// when both paths are empty. One without the other is an error naming the
// missing flag, never a silent fallback to plain TCP. The listener's
// connection mux terminates TLS for gRPC and the HTTP API alike and tells
// them apart by ALPN: gRPC clients ask for h2, HTTP/1.1 clients for
// http/1.1 or nothing.
func serverTLS(certFile, keyFile string) (*tls.Config, error) {
	switch {
	case certFile == "" && keyFile == "":
		return nil, nil
	case certFile == "":
		return nil, fmt.Errorf("controller: --tls-key=%s needs --tls-cert", keyFile)
	case keyFile == "":
		return nil, fmt.Errorf("controller: --tls-cert=%s needs --tls-key", certFile)
	}
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("controller: --tls-cert=%s --tls-key=%s: %w", certFile, keyFile, err)
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12,
		// HTTP/1.1 first: the server's order decides, and a client that
		// offers both (curl, browsers) is an HTTP client, while gRPC
		// clients offer h2 alone.
		// Other controllers offer replicaProto alone.
		NextProtos: []string{alpnHTTP1, alpnGRPC, replicaProto}}, nil
}
