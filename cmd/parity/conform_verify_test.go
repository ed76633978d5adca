package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parityhpc/parity/conformance"
	"github.com/parityhpc/parity/labs/sim/amdsim"
	"github.com/parityhpc/parity/reports"
	"github.com/parityhpc/parity/vendors"
	"github.com/parityhpc/parity/vendors/amd"
	"github.com/parityhpc/parity/vendors/contract"
	"github.com/parityhpc/parity/vendors/plugin"
)

// serveAMD serves the AMD driver on 4 simulated MI300X over the plugin
// protocol until the test ends, misordered (a contract failure) or not,
// and returns its socket and sysfs root.
func serveAMD(t *testing.T, misordered bool) (sock, root string) {
	t.Helper()
	root = t.TempDir()
	if _, err := amdsim.Generate(root, amdsim.Config{GPUs: 4, Seed: 31}); err != nil {
		t.Fatal(err)
	}
	sock = filepath.Join(t.TempDir(), "amd.sock")
	var d vendors.Driver = amd.New(root, amd.WithLogger(slog.New(slog.DiscardHandler)))
	if misordered {
		d = misorderedAMD{d.(*amd.Driver)}
	}
	ctx, cancel := context.WithCancel(context.Background())
	ready, done := make(chan struct{}), make(chan error, 1)
	go func() {
		done <- plugin.Serve(ctx, sock, d, plugin.WithServerLogger(slog.New(slog.DiscardHandler)), plugin.WithReady(func() { close(ready) }))
	}()
	select {
	case <-ready:
	case err := <-done:
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); <-done })
	return sock, root
}

// verify runs `parity conform verify` and returns its output and error.
func verify(t *testing.T, args ...string) (string, error) {
	t.Helper()
	cmd := newConformVerifyCmd()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetArgs(args)
	err := cmd.ExecuteContext(context.Background())
	return out.String(), err
}

func readCertificate(t *testing.T, path string) *reports.Certificate {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	c, err := reports.ReadCertificate(f)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestConformDriverWritesACertificateThatVerifies(t *testing.T) {
	sock, root := serveAMD(t, false)
	out := t.TempDir()
	text, err := conformDriver(t, "--contract-only", "--plugin", sock, "--root", root, "--out", out)
	if err != nil {
		t.Fatalf("conform driver: %v\n%s", err, text)
	}
	path := filepath.Join(out, reports.CertificateFile)
	if !strings.Contains(text, "certificate: "+path+" (certified; suite "+conformance.SuiteVersion) {
		t.Errorf("output:\n%s\nwant the certificate named", text)
	}
	c := readCertificate(t, path)
	var inv struct{ Devices []struct{ UUID string } }
	if err := json.Unmarshal(c.Inventory, &inv); err != nil || len(inv.Devices) != 4 || inv.Devices[0].UUID == "" {
		t.Errorf("inventory %s (%v); want the 4 MI300X with their UUIDs", c.Inventory, err)
	}
	if c.Adapter.Vendor != "amd" || c.Adapter.Name == "" || c.Adapter.Version == "" || !c.ContractOnly || !c.Certified ||
		c.SuiteVersion != conformance.SuiteVersion || len(c.Specs) != 14 || !c.Issued.Equal(conformEpoch) {
		t.Errorf("certificate %+v", c)
	}
	got, err := verify(t, path)
	if err != nil || !strings.Contains(got, "verifies against "+filepath.Join(out, reports.JSONFile)) ||
		!strings.Contains(got, "the driver contract only: 14 specs") {
		t.Errorf("verify: %v\n%s", err, got)
	}
}

// TestConformVerifyTampering edits the certificate or the report on disk
// and wants verify to fail, naming what does not match.
func TestConformVerifyTampering(t *testing.T) {
	sock, root := serveAMD(t, false)
	clean := t.TempDir()
	if text, err := conformDriver(t, "--contract-only", "--plugin", sock, "--root", root, "--out", clean); err != nil {
		t.Fatalf("conform driver: %v\n%s", err, text)
	}
	read := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join(clean, name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	certJSON, reportJSON := read(reports.CertificateFile), read(reports.JSONFile)
	editCert := func(edit func(c *reports.Certificate)) []byte {
		c, err := reports.ReadCertificate(bytes.NewReader(certJSON))
		if err != nil {
			t.Fatal(err)
		}
		edit(c)
		var b bytes.Buffer
		if err := reports.WriteCertificate(&b, c); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	for _, tc := range []struct {
		name         string
		cert, report []byte
		want         string
	}{
		{"changed verdict", editCert(func(c *reports.Certificate) {
			for i := range c.Specs {
				if c.Specs[i].ID == contract.SpecID(contract.CheckConditions) {
					c.Specs[i].Status = reports.StatusPassed // it was skipped: no --trigger
				}
			}
		}), reportJSON, "spec " + contract.SpecID(contract.CheckConditions) + " [amd] is passed in the certificate, skipped in the report"},
		{"changed report byte", certJSON, bytes.Replace(reportJSON, []byte(`"devices": 4`), []byte(`"devices": 5`), 1),
			"report sha256 is " + reports.Digest(bytes.Replace(reportJSON, []byte(`"devices": 4`), []byte(`"devices": 5`), 1))},
		{"missing spec", editCert(func(c *reports.Certificate) { c.Specs = c.Specs[1:] }), reportJSON,
			"is missing from the certificate"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, data := range map[string][]byte{reports.CertificateFile: tc.cert, reports.JSONFile: tc.report} {
				if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			got, err := verify(t, filepath.Join(dir, reports.CertificateFile))
			var ee *exitError
			if !errors.As(err, &ee) || ee.code != 1 {
				t.Fatalf("verify: %v; want exit status 1\n%s", err, got)
			}
			if !strings.Contains(got, "does not verify against") || !strings.Contains(got, tc.want) {
				t.Errorf("output:\n%s\nwant %q", got, tc.want)
			}
		})
	}
	// The clean pair still verifies: the cases above fail for their edit.
	if got, err := verify(t, filepath.Join(clean, reports.CertificateFile)); err != nil {
		t.Errorf("the untouched certificate: %v\n%s", err, got)
	}
}

func TestConformVerifyRefusesAFailedCertification(t *testing.T) {
	sock, root := serveAMD(t, true)
	out := t.TempDir()
	text, err := conformDriver(t, "--contract-only", "--plugin", sock, "--root", root, "--out", out)
	if err == nil || !strings.Contains(text, "NOT certified (a spec failed)") {
		t.Fatalf("conform driver: %v\n%s\nwant a failed check and a certificate saying so", err, text)
	}
	got, err := verify(t, filepath.Join(out, reports.CertificateFile))
	if err == nil || !strings.Contains(got, "spec "+contract.SpecID(contract.CheckVisibleDevices)+" [amd] failed in the report") {
		t.Errorf("verify: %v\n%s\nwant the failed spec named", err, got)
	}
}

func TestConformVerifyUsageErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`{"certificateVersion": 1, "report": {"file": "../../etc/passwd"}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{filepath.Join(dir, "none.json")}, "no such file"},
		{[]string{bad}, `report.file "../../etc/passwd" must name a file beside the certificate`},
		{[]string{bad, "--report", filepath.Join(dir, "none.json")}, "--report: open"},
		{nil, "accepts 1 arg(s)"},
	} {
		if _, err := verify(t, c.args...); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("verify %q: %v; want %q", c.args, err, c.want)
		}
	}
}
