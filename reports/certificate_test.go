package reports

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
)

// certified is a green one-vendor run of an adapter, its report.json and
// a certificate of it.
func certified(t *testing.T) ([]byte, *Certificate) {
	t.Helper()
	r := &Run{ID: "driver-contract-examplegpu-20250601T030000Z", Target: "plugin:unix:///tmp/exg.sock",
		Started: t0, Finished: at(time.Minute), ParityVersion: "v0.5.0", SuiteVersion: "2026.12", Host: "ci",
		Vendors: []Vendor{{Name: "examplegpu", Driver: "examplegpu", DriverVersion: "example/1", Devices: 2, Model: "exg1"}}}
	for _, id := range []string{"driver-contract/info", "driver-contract/discover", "isolation/visible-devices"} {
		r.Specs = append(r.Specs, SpecResult{ID: id, Area: strings.Split(id, "/")[0], Name: id, Vendor: "examplegpu",
			Status: StatusPassed, Duration: time.Second})
	}
	r.Specs = append(r.Specs, SpecResult{ID: "health/xid-drain", Area: AreaHealth, Name: "drain", Vendor: "examplegpu",
		Status: StatusSkipped, Reason: "the lab cannot fault the adapter's hardware"})
	var b bytes.Buffer
	if err := WriteJSON(&b, r); err != nil {
		t.Fatal(err)
	}
	inv := json.RawMessage(`{"vendor":"examplegpu","devices":[{"uuid":"EXG-0"},{"uuid":"EXG-1"}]}`)
	c, err := NewCertificate(b.Bytes(), Adapter{Name: "examplegpu", Vendor: "examplegpu", Version: "example/1",
		Target: "unix:///tmp/exg.sock"}, inv, at(2*time.Minute), false)
	if err != nil {
		t.Fatal(err)
	}
	// Through the file format, as a third party reads it.
	var cb bytes.Buffer
	if err := WriteCertificate(&cb, c); err != nil {
		t.Fatal(err)
	}
	c, err = ReadCertificate(&cb)
	if err != nil {
		t.Fatal(err)
	}
	return b.Bytes(), c
}

var knownSuites = []string{"2026.11", "2026.12"}

func TestCertificateVerifies(t *testing.T) {
	report, c := certified(t)
	if !c.Certified || len(c.Specs) != 4 || c.SuiteVersion != "2026.12" || c.Report.SHA256 != Digest(report) {
		t.Fatalf("certificate %+v", c)
	}
	if err := VerifyCertificate(c, report, knownSuites); err != nil {
		t.Fatalf("an untouched certificate does not verify: %v", err)
	}
}

// TestCertificateTampering changes one thing at a time and wants the
// verifier to name it.
func TestCertificateTampering(t *testing.T) {
	for _, c := range []struct {
		name   string
		tamper func(report []byte, c *Certificate) []byte
		want   []string // substrings of the errors, all required
	}{
		{"a verdict changed in the certificate", func(r []byte, c *Certificate) []byte {
			c.Specs[certSpec(c, "driver-contract/discover")].Status = StatusFailed
			return r
		}, []string{"spec driver-contract/discover [examplegpu] is failed in the certificate, passed in the report"}},
		{"a failed spec made to look passed in the report, digest not updated", func(r []byte, c *Certificate) []byte {
			return bytes.Replace(r, []byte(`"status": "skipped"`), []byte(`"status": "passed"`), 1)
		}, []string{"report sha256 is", "the report is not the one certified",
			"spec health/xid-drain [examplegpu] is skipped in the certificate, passed in the report"}},
		{"one byte of the report changed", func(r []byte, c *Certificate) []byte {
			return bytes.Replace(r, []byte("ci"), []byte("cj"), 1)
		}, []string{"report sha256 is " + Digest(bytes.Replace(mustReport(t), []byte("ci"), []byte("cj"), 1))}},
		{"a spec missing from the certificate", func(r []byte, c *Certificate) []byte {
			c.Specs = slices.DeleteFunc(c.Specs, func(s CertSpec) bool { return s.ID == "isolation/visible-devices" })
			return r
		}, []string{"spec isolation/visible-devices [examplegpu] (passed in the report) is missing from the certificate"}},
		{"a spec the report lacks", func(r []byte, c *Certificate) []byte {
			c.Specs = append(c.Specs, CertSpec{ID: "placement/extra", Vendor: "examplegpu", Status: StatusPassed})
			return r
		}, []string{"spec placement/extra [examplegpu] is in the certificate but not in the report"}},
		{"a failed spec, both consistent", func(r []byte, c *Certificate) []byte {
			r = bytes.Replace(r, []byte(`"status": "skipped"`), []byte(`"status": "failed"`), 1)
			c.Report.SHA256 = Digest(r)
			c.Specs[certSpec(c, "health/xid-drain")].Status = StatusFailed
			return r
		}, []string{"spec health/xid-drain [examplegpu] failed in the report: the lab cannot fault", "certified is true, but the report is not green"}},
		{"an unknown suite version", func(r []byte, c *Certificate) []byte {
			c.SuiteVersion = "2099.1"
			return r
		}, []string{`suiteVersion "2099.1" is not a suite version this verifier knows (2026.11, 2026.12)`,
			`suiteVersion is "2099.1" in the certificate, "2026.12" in the report`}},
		{"another adapter version", func(r []byte, c *Certificate) []byte {
			c.Adapter.Version = "example/2"
			return r
		}, []string{`adapter.version is "example/2" in the certificate, "example/1" in the report`}},
		{"an inventory with a device more", func(r []byte, c *Certificate) []byte {
			c.Inventory = json.RawMessage(`{"devices":[{},{},{}]}`)
			return r
		}, []string{`inventory lists 3 devices, the report's vendor "examplegpu" has 2`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			report, cert := certified(t)
			report = c.tamper(slices.Clone(report), cert)
			err := VerifyCertificate(cert, report, knownSuites)
			if err == nil {
				t.Fatal("the tampered certificate verifies")
			}
			if !errors.Is(err, ErrCertificate) {
				t.Errorf("error %v does not wrap ErrCertificate", err)
			}
			for _, want := range c.want {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error lacks %q:\n%v", want, err)
				}
			}
		})
	}
}

func certSpec(c *Certificate, id string) int {
	return slices.IndexFunc(c.Specs, func(s CertSpec) bool { return s.ID == id })
}

func mustReport(t *testing.T) []byte {
	r, _ := certified(t)
	return r
}

func TestReadCertificateRefusesOtherVersions(t *testing.T) {
	_, err := ReadCertificate(strings.NewReader(`{"certificateVersion": 7}`))
	if !errors.Is(err, ErrCertificate) || !strings.Contains(err.Error(), "certificateVersion 7") {
		t.Errorf("version 7: %v", err)
	}
	if _, err := ReadCertificate(strings.NewReader(`{"certificateVersion": `)); err == nil {
		t.Error("a truncated certificate reads")
	}
}
