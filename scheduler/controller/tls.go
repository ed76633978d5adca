package controller

import (
	"crypto/tls"
	"fmt"

	"google.golang.org/grpc/credentials"
)

// serverTLS loads the listener's certificate and key; nil credentials
// (plain TCP) when both paths are empty. One without the other is an
// error naming the missing flag, never a silent fallback to plain TCP.
func serverTLS(certFile, keyFile string) (credentials.TransportCredentials, error) {
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
	return credentials.NewTLS(&tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}), nil
}
