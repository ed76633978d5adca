package controller

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"log/slog"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/parityhpc/parity/scheduler/auth"
	"github.com/parityhpc/parity/scheduler/client"
	"github.com/parityhpc/parity/scheduler/config"
)

// selfSigned writes a self-signed certificate for 127.0.0.1 (its own CA)
// and its key to dir, returning their paths.
func selfSigned(t *testing.T, dir, name string) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, DNSNames: []string{"localhost"},
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, BasicConstraintsValid: true, IsCA: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, name+".crt"), filepath.Join(dir, name+".key")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kder}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}

func TestTLSListener(t *testing.T) {
	dir := t.TempDir()
	cert, key := selfSigned(t, dir, "controller")
	other, _ := selfSigned(t, dir, "other")
	cfg, err := config.Parse("test.yaml", []byte(testCluster))
	if err != nil {
		t.Fatal(err)
	}
	c, err := New(Options{Config: cfg, Listen: "127.0.0.1:0", StateDir: t.TempDir(), MetricsAddr: "off", NoScheduler: true,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), TLSCert: cert, TLSKey: key})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	tok, err := auth.Sign(c.Key(), auth.Claims{User: "alice", Role: auth.RoleUser, IssuedAt: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	call := func(ca string) error {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		var opts []grpc.DialOption
		if ca != "" {
			opt, err := client.WithCA(ca)
			if err != nil {
				t.Fatal(err)
			}
			opts = append(opts, opt)
		}
		cl, err := client.Dial(ctx, c.Addr(), tok, opts...)
		if err != nil {
			t.Fatal(err)
		}
		defer cl.Close()
		_, err = cl.Submit(ctx, gpuJob("tls", 1))
		return err
	}
	if err := call(cert); err != nil {
		t.Errorf("with the controller's CA: %v", err)
	}
	for what, ca := range map[string]string{"plain TCP": "", "another CA": other} {
		if err := call(ca); status.Code(err) != codes.Unavailable {
			t.Errorf("%s: %v, want Unavailable", what, err)
		}
	}
}

func TestTLSOptionsBadInput(t *testing.T) {
	dir := t.TempDir()
	cert, key := selfSigned(t, dir, "controller")
	garbage := filepath.Join(dir, "garbage.pem")
	if err := os.WriteFile(garbage, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct{ cert, key, want string }{
		{cert, "", "--tls-cert=" + cert + " needs --tls-key"},
		{"", key, "--tls-key=" + key + " needs --tls-cert"},
		{garbage, key, "--tls-cert=" + garbage},
		{cert, filepath.Join(dir, "missing.key"), "missing.key"},
	}
	for _, tc := range cases {
		_, err := serverTLS(tc.cert, tc.key)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("serverTLS(%q, %q) = %v, want an error naming %q", tc.cert, tc.key, err, tc.want)
		}
	}
	if _, err := client.WithCA(garbage); err == nil || !strings.Contains(err.Error(), "no PEM certificate") {
		t.Errorf("WithCA(garbage) = %v", err)
	}
	if _, err := client.WithCA(filepath.Join(dir, "missing.pem")); err == nil || !strings.Contains(err.Error(), "--ca") {
		t.Errorf("WithCA(missing) = %v", err)
	}
}
