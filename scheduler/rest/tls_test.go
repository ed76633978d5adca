package rest_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/parityhpc/parity/scheduler/auth"
	"github.com/parityhpc/parity/scheduler/controller"
)

// selfSigned writes a certificate for 127.0.0.1 and its key.
func selfSigned(t *testing.T, dir string) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "ctl"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour), IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true, IsCA: true}
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
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	return certFile, keyFile, pool
}

// TestServedOverTLS: with TLS configured the REST paths answer on the
// controller's one listener over HTTPS, validated as over plain HTTP.
func TestServedOverTLS(t *testing.T) {
	certFile, keyFile, pool := selfSigned(t, t.TempDir())
	c := startClusterWith(t, func(o *controller.Options) { o.TLSCert, o.TLSKey = certFile, keyFile })
	c.base = "https://" + c.ctrl.Addr()
	c.http = &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	alice := c.token(t, "alice", auth.RoleUser)
	if a := c.do(t, "GET", "/slurm/v0.0.44/ping/", alice, nil); a.code != http.StatusOK {
		t.Fatalf("ping over TLS: %d %s", a.code, a.body)
	}
	id := c.submit(t, alice, "tls")
	if j := firstJob(t, c.do(t, "GET", "/slurm/v0.0.44/jobs/", alice, nil)); int(j["job_id"].(float64)) != id {
		t.Fatalf("jobs over TLS: %v, want job %d", j["job_id"], id)
	}
}
