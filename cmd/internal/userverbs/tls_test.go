package userverbs

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
	"testing"
	"time"

	"github.com/parityhpc/parity/scheduler/client"
	"github.com/parityhpc/parity/scheduler/config"
	"github.com/parityhpc/parity/scheduler/controller"
)

// writeSelfSigned writes a self-signed certificate for 127.0.0.1 (its own
// CA) and its key under dir.
func writeSelfSigned(t *testing.T, dir string) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "controller"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, BasicConstraintsValid: true, IsCA: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "ctl.crt"), filepath.Join(dir, "ctl.key")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kder}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}

// The verbs reach a controller serving TLS with --ca or $PARITY_CA, and
// fail with the hint to check the controller without it.
func TestVerbsOverTLS(t *testing.T) {
	cert, key := writeSelfSigned(t, t.TempDir())
	cfg, err := config.Parse("cli.yaml", []byte(e2eCluster))
	if err != nil {
		t.Fatal(err)
	}
	c, err := controller.New(controller.Options{Config: cfg, Listen: "127.0.0.1:0", StateDir: t.TempDir(), MetricsAddr: "off",
		NoScheduler: true, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), TLSCert: cert, TLSKey: key})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	cl := &cliCluster{t: t, c: c, dir: t.TempDir()}
	if out := cl.ok(cl.as("alice", nil), "sbatch", "--ca", cert, "--parsable", "--wrap", "hostname"); out != "1\n" {
		t.Errorf("sbatch --ca: %q", out)
	}
	if out := cl.ok(cl.as("alice", map[string]string{client.EnvCA: cert}), "squeue", "-h", "-o", "%i"); out != "1\n" {
		t.Errorf("squeue with $PARITY_CA: %q", out)
	}
	cl.fails(cl.as("alice", nil), 1, []string{"squeue"}, "is the controller running at")
	cl.fails(cl.as("alice", nil), 1, []string{"scontrol", "--ca", filepath.Join(t.TempDir(), "none.pem"), "show", "job", "1"}, "--ca")
}
