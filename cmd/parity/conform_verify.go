package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/parityhpc/parity/conformance"
	"github.com/parityhpc/parity/gres"
	"github.com/parityhpc/parity/reports"
	"github.com/parityhpc/parity/vendors"
)

// writeConformCertificate writes certificate.json beside the report
// `conform driver` wrote in dir: the suite version, the adapter, the
// inventory it certified, every verdict and the report's digest.
func writeConformCertificate(w io.Writer, dir, target string, info vendors.Info, inv gres.Inventory,
	issued time.Time, contractOnly bool) error {
	report, err := os.ReadFile(filepath.Join(dir, reports.JSONFile))
	if err != nil {
		return fmt.Errorf("certificate: %w", err)
	}
	invJSON, err := json.Marshal(inv)
	if err != nil {
		return fmt.Errorf("certificate: inventory: %w", err)
	}
	a := reports.Adapter{Name: info.Name, Vendor: info.Vendor, Version: info.Version, Target: target}
	c, err := reports.NewCertificate(report, a, invJSON, issued, contractOnly)
	if err != nil {
		return err
	}
	var b bytes.Buffer
	if err := reports.WriteCertificate(&b, c); err != nil {
		return err
	}
	path := filepath.Join(dir, reports.CertificateFile)
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		return fmt.Errorf("certificate: %w", err)
	}
	verdict := "certified"
	if !c.Certified {
		verdict = "NOT certified (a spec failed)"
	}
	fmt.Fprintf(w, "certificate: %s (%s; suite %s, report sha256 %s)\n", path, verdict, c.SuiteVersion, c.Report.SHA256)
	return nil
}

// newConformVerifyCmd is `parity conform verify`.
func newConformVerifyCmd() *cobra.Command {
	var reportPath string
	cmd := &cobra.Command{
		Use:   "verify CERTIFICATE",
		Short: "Check a driver certificate against the report it summarises",
		Long: `Checks a certificate.json written by 'parity conform driver --out DIR'
against its report.json (by default the one beside it): the report's
SHA-256 is the one the certificate records; the report's run, suite
version and adapter (name, vendor, version, device count) are the
certificate's; every verdict in the certificate is in the report with the
same status and every result in the report is in the certificate; no spec
failed; and the suite version is one this parity knows (` + strings.Join(conformance.KnownSuiteVersions(), ", ") + `).
Prints every mismatch it finds and exits 1 when there is any.

A certificate is not signed: it shows that it and the report agree, and a
verifier who trusts the report (e.g. one published by the vendor) can rely
on the certificate's summary of it.`,
		Example: `  parity conform verify driver-report/certificate.json
  parity conform verify examplegpu.cert.json --report examplegpu.report.json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runConformVerify(cmd.OutOrStdout(), args[0], reportPath)
		},
	}
	cmd.Flags().StringVar(&reportPath, "report", "", "the report.json the certificate summarises (default: the file it names, beside it)")
	return cmd
}

func runConformVerify(w io.Writer, certPath, reportPath string) error {
	f, err := os.Open(certPath)
	if err != nil {
		return usageError("conform verify", "%v", err)
	}
	c, err := reports.ReadCertificate(f)
	f.Close()
	if err != nil {
		return usageError("conform verify", "%s: %v", certPath, err)
	}
	if reportPath == "" {
		if c.Report.File == "" || filepath.IsAbs(c.Report.File) || strings.Contains(c.Report.File, "..") {
			return usageError("conform verify", "%s: report.file %q must name a file beside the certificate; give --report", certPath, c.Report.File)
		}
		reportPath = filepath.Join(filepath.Dir(certPath), c.Report.File)
	}
	report, err := os.ReadFile(reportPath)
	if err != nil {
		return usageError("conform verify", "--report: %v", err)
	}
	if err := reports.VerifyCertificate(c, report, conformance.KnownSuiteVersions()); err != nil {
		var lines []string
		for _, e := range unjoin(err) {
			lines = append(lines, "  "+e.Error())
		}
		fmt.Fprintf(w, "%s does not verify against %s:\n%s\n", certPath, reportPath, strings.Join(lines, "\n"))
		return &exitError{code: 1, err: fmt.Errorf("conform verify: %s: %d mismatches", certPath, len(lines))}
	}
	t := c.CertTotals()
	scope := "the driver contract and the suite"
	if c.ContractOnly {
		scope = "the driver contract only"
	}
	fmt.Fprintf(w, "%s verifies against %s: adapter %s %s (vendor %s), suite %s, %s: %d specs, %d passed, %d skipped, none failed; report sha256 %s\n",
		certPath, reportPath, c.Adapter.Name, c.Adapter.Version, c.Adapter.Vendor, c.SuiteVersion, scope,
		len(c.Specs), t.Passed, t.Skipped, c.Report.SHA256)
	return nil
}

// unjoin lists the errors errors.Join put together (err itself otherwise).
func unjoin(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}
