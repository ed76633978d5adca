package reports

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

// CertificateVersion is the version of the certificate document.
const CertificateVersion = 1

// CertificateFile is the name `parity conform driver --out` gives it.
const CertificateFile = "certificate.json"

// ErrCertificate is wrapped by every reason a certificate does not verify.
var ErrCertificate = errors.New("certificate does not verify")

// Certificate is the machine-readable result of certifying a vendor's
// driver adapter: which suite, which adapter and inventory, every verdict,
// and the SHA-256 of the report.json it summarises, so a third party can
// check the two agree (VerifyCertificate). It is not signed: it proves
// that a certificate and a report are consistent, not who produced them.
type Certificate struct {
	CertificateVersion int       `json:"certificateVersion"`
	SuiteVersion       string    `json:"suiteVersion"`
	ParityVersion      string    `json:"parityVersion"`
	Issued             time.Time `json:"issued"`
	Adapter            Adapter   `json:"adapter"`
	// Inventory is what the adapter discovered, as the driver contract's
	// JSON (gres.Inventory); kept verbatim.
	Inventory json.RawMessage `json:"inventory"`
	Report    CertReport      `json:"report"`
	// ContractOnly: the driver-contract checks ran, the suite did not.
	ContractOnly bool `json:"contractOnly,omitempty"`
	// Certified: at least one spec, and no spec failed or errored.
	Certified bool       `json:"certified"`
	Specs     []CertSpec `json:"specs"`
}

// Adapter names the certified driver adapter.
type Adapter struct {
	Name    string `json:"name"`
	Vendor  string `json:"vendor"`
	Version string `json:"version"`
	Target  string `json:"target,omitempty"` // where it was reached, e.g. unix:///run/x.sock
}

// CertReport identifies the report a certificate summarises.
type CertReport struct {
	File   string `json:"file"` // relative to the certificate's directory
	SHA256 string `json:"sha256"`
	RunID  string `json:"runId"`
}

// CertSpec is one verdict.
type CertSpec struct {
	ID     string `json:"id"`
	Vendor string `json:"vendor,omitempty"`
	Status Status `json:"status"`
	Reason string `json:"reason,omitempty"`
}

// Digest is the hex SHA-256 of data, as certificates record it.
func Digest(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// NewCertificate certifies the run whose report.json bytes are reportJSON
// (what WriteJSON wrote for it; the digest covers these exact bytes).
func NewCertificate(reportJSON []byte, a Adapter, inventory json.RawMessage, issued time.Time, contractOnly bool) (*Certificate, error) {
	r, err := ReadJSON(bytes.NewReader(reportJSON))
	if err != nil {
		return nil, fmt.Errorf("reports: certificate: %w", err)
	}
	if len(inventory) == 0 {
		inventory = json.RawMessage("null")
	}
	c := &Certificate{CertificateVersion: CertificateVersion, SuiteVersion: r.SuiteVersion, ParityVersion: r.ParityVersion,
		Issued: issued.UTC(), Adapter: a, Inventory: inventory, ContractOnly: contractOnly,
		Report: CertReport{File: JSONFile, SHA256: Digest(reportJSON), RunID: r.ID}}
	specs := slices.Clone(r.Specs)
	slices.SortStableFunc(specs, compareResults(r.vendorRank()))
	for _, s := range specs {
		c.Specs = append(c.Specs, CertSpec{ID: s.ID, Vendor: s.Vendor, Status: s.Status, Reason: s.Reason})
	}
	c.Certified = Green(r)
	return c, nil
}

// WriteCertificate writes c as indented JSON.
func WriteCertificate(w io.Writer, c *Certificate) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(c); err != nil {
		return fmt.Errorf("reports: write certificate: %w", err)
	}
	return nil
}

// ReadCertificate reads a certificate and checks its version.
func ReadCertificate(rd io.Reader) (*Certificate, error) {
	var c Certificate
	if err := json.NewDecoder(rd).Decode(&c); err != nil {
		return nil, fmt.Errorf("reports: read certificate: %w", err)
	}
	if c.CertificateVersion != CertificateVersion {
		return nil, fmt.Errorf("%w: certificateVersion %d (this reader knows %d)", ErrCertificate, c.CertificateVersion, CertificateVersion)
	}
	return &c, nil
}

// VerifyCertificate checks c against the report.json bytes it claims to
// summarise: the digest matches, the report's run, suite and adapter are
// the certificate's, every verdict in one is in the other and the same,
// no spec failed, and the suite version is one of known. It returns every
// mismatch found (joined, each wrapping ErrCertificate), nil when none.
func VerifyCertificate(c *Certificate, reportJSON []byte, known []string) error {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("%w: "+format, append([]any{ErrCertificate}, args...)...))
	}
	if !slices.Contains(known, c.SuiteVersion) {
		bad("suiteVersion %q is not a suite version this verifier knows (%s)", c.SuiteVersion, strings.Join(known, ", "))
	}
	if got := Digest(reportJSON); got != c.Report.SHA256 {
		bad("report sha256 is %s, the certificate records %s: the report is not the one certified", got, cmpOr(c.Report.SHA256, `""`))
	}
	r, err := ReadJSON(bytes.NewReader(reportJSON))
	if err != nil {
		bad("the report does not read: %v", err)
		return errors.Join(errs...)
	}
	for _, f := range []struct{ field, cert, report string }{
		{"report.runId", c.Report.RunID, r.ID},
		{"suiteVersion", c.SuiteVersion, r.SuiteVersion},
	} {
		if f.cert != f.report {
			bad("%s is %q in the certificate, %q in the report", f.field, f.cert, f.report)
		}
	}
	errs = append(errs, verifyAdapter(c, r)...)
	errs = append(errs, verifyVerdicts(c, r)...)
	if len(c.Specs) == 0 {
		bad("the certificate lists no specs: it certifies nothing")
	}
	if c.Certified != Green(r) {
		bad("certified is %t, but the report is %s", c.Certified, map[bool]string{true: "green", false: "not green"}[Green(r)])
	}
	return errors.Join(errs...)
}

// verifyAdapter checks the adapter and inventory against the report's
// vendor of the same name.
func verifyAdapter(c *Certificate, r *Run) []error {
	i := slices.IndexFunc(r.Vendors, func(v Vendor) bool { return v.Name == c.Adapter.Vendor })
	if i < 0 {
		return []error{fmt.Errorf("%w: adapter.vendor %q is not among the report's vendors (%s)", ErrCertificate,
			c.Adapter.Vendor, strings.Join(r.VendorNames(), ", "))}
	}
	v := r.Vendors[i]
	var errs []error
	for _, f := range []struct{ field, cert, report string }{
		{"adapter.name", c.Adapter.Name, v.Driver},
		{"adapter.version", c.Adapter.Version, v.DriverVersion},
	} {
		if f.cert != f.report {
			errs = append(errs, fmt.Errorf("%w: %s is %q in the certificate, %q in the report", ErrCertificate, f.field, f.cert, f.report))
		}
	}
	var inv struct {
		Devices []json.RawMessage `json:"devices"`
	}
	if err := json.Unmarshal(c.Inventory, &inv); err != nil {
		errs = append(errs, fmt.Errorf("%w: inventory does not read: %v", ErrCertificate, err))
	} else if len(inv.Devices) != v.Devices {
		errs = append(errs, fmt.Errorf("%w: inventory lists %d devices, the report's vendor %q has %d", ErrCertificate,
			len(inv.Devices), v.Name, v.Devices))
	}
	return errs
}

// verifyVerdicts compares the verdicts both ways and refuses failures.
func verifyVerdicts(c *Certificate, r *Run) []error {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("%w: "+format, append([]any{ErrCertificate}, args...)...))
	}
	inReport := make(map[Key]SpecResult, len(r.Specs))
	for _, s := range r.Specs {
		inReport[s.Key()] = s
	}
	inCert := make(map[Key]bool, len(c.Specs))
	for _, s := range c.Specs {
		k := Key{ID: s.ID, Vendor: s.Vendor}
		who := cmpOr(s.Vendor, "all vendors")
		if inCert[k] {
			bad("spec %s [%s] is listed twice", s.ID, who)
			continue
		}
		inCert[k] = true
		rs, ok := inReport[k]
		switch {
		case !ok:
			bad("spec %s [%s] is in the certificate but not in the report", s.ID, who)
		case rs.Status != s.Status:
			bad("spec %s [%s] is %s in the certificate, %s in the report", s.ID, who, s.Status, rs.Status)
		}
	}
	specs := slices.Clone(r.Specs)
	slices.SortStableFunc(specs, compareResults(r.vendorRank()))
	for _, s := range specs {
		who := cmpOr(s.Vendor, "all vendors")
		if !inCert[s.Key()] {
			bad("spec %s [%s] (%s in the report) is missing from the certificate", s.ID, who, s.Status)
		}
		// The report is what the digest vouches for: its verdicts decide.
		if s.Status.Failing() {
			bad("spec %s [%s] %s in the report: %s", s.ID, who, s.Status, cmpOr(s.Reason, "no reason given"))
		}
	}
	return errs
}

// CertTotals counts the certificate's verdicts.
func (c *Certificate) CertTotals() Totals {
	var t Totals
	for _, s := range c.Specs {
		t.add(s.Status)
	}
	return t
}
