package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/parityhpc/parity/conformance"
	"github.com/parityhpc/parity/gres"
	"github.com/parityhpc/parity/reports"
	"github.com/parityhpc/parity/vendors"
	"github.com/parityhpc/parity/vendors/contract"
	"github.com/parityhpc/parity/vendors/plugin"
)

// conformDriverEnv is what the command takes from the process, injected
// so tests get reproducible reports.
type conformDriverEnv struct {
	now      func() time.Time
	hostname func() (string, error)
}

type conformDriverOptions struct {
	plugin, empty, root, out, trigger, focus string
	timeout, connect                         time.Duration
	contractOnly                             bool
}

// newConformDriverCmd is `parity conform driver`.
func newConformDriverCmd() *cobra.Command {
	return newConformDriverCmdWith(conformDriverEnv{now: time.Now, hostname: os.Hostname})
}

func newConformDriverCmdWith(env conformDriverEnv) *cobra.Command {
	var o conformDriverOptions
	cmd := &cobra.Command{
		Use:   "driver --plugin unix:///path.sock",
		Short: "Certify an out-of-tree vendor adapter against the driver contract",
		Long: `Dials a vendor adapter serving the plugin protocol (vendors/plugin) and runs
the driver-contract checks on it: a well-formed Info; a valid inventory whose
UUIDs stay stable across discoveries and across a new connection (an agent
restart); device files under --root that exist as character devices with the
reported numbers (placeholders are reported as such); idempotent Prepare and
Release; visible-device variables listing 0..k-1 in the order of the prepared
device files; unknown devices refused; samples within physical ranges;
well-formed conditions and diagnoses.

Checks that need something the command was not given are skipped with the
reason, never passed: --trigger is a shell command that makes the adapter's
hardware raise a condition (for the example adapter: example-driver inject
--root DIR --device 0); --empty-plugin is a second socket of the adapter
serving a host without its hardware.

Then, unless --contract-only, it runs the whole conformance suite on a lab
of one node whose accelerator is the adapter (the host is the built-in
CPU-only machine): placement, isolation, accounting, health and
reclamation, with the contract results above as its driver-contract specs.
The lab cannot fault the adapter's hardware, so fault-driven specs are
skipped with that reason. Running as root confines jobs in cgroups; the
adapter's device files must then be character devices or placeholders the
lab may replace.

Prints a table (and the suite's matrix) and, with --out, writes
report.html, report.json and junit.xml there, one report for both, and
certificate.json: the machine-readable certification result (suite
version, the adapter's name and version, the inventory it certified,
every spec's verdict and the SHA-256 of report.json) that anyone can check
against the report with 'parity conform verify DIR/certificate.json'.
Exits non-zero when a check or spec fails.`,
		Example: `  parity conform driver --plugin unix:///run/parity/examplegpu.sock
  parity conform driver --plugin unix:///run/exg.sock --root /var/lib/exg \
      --trigger 'example-driver inject --root /var/lib/exg --device 0' --out ./report`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runConformDriver(cmd.Context(), cmd.OutOrStdout(), env, o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.plugin, "plugin", "", "the adapter's socket: unix:///path.sock or a path (required)")
	f.StringVar(&o.empty, "empty-plugin", "", "a socket of the same adapter on a host without its hardware")
	f.StringVar(&o.root, "root", "", "directory the device files must lie under (default: anywhere)")
	f.StringVar(&o.trigger, "trigger", "", "shell command that makes the adapter's hardware raise a condition")
	f.StringVar(&o.out, "out", "", "write report.html, report.json, junit.xml and certificate.json into this directory")
	f.DurationVar(&o.timeout, "timeout", 30*time.Second, "time limit of each check")
	f.DurationVar(&o.connect, "connect-timeout", 10*time.Second, "how long to wait for the adapter to answer")
	f.BoolVar(&o.contractOnly, "contract-only", false, "run the contract checks only, not the suite on a lab of the adapter")
	f.StringVar(&o.focus, "focus", "", "run only suite specs whose \"ID vendor name\" matches this regular expression")
	_ = cmd.MarkFlagRequired("plugin")
	return cmd
}

func runConformDriver(ctx context.Context, w io.Writer, env conformDriverEnv, o conformDriverOptions) error {
	if ctx == nil {
		ctx = context.Background()
	}
	if o.timeout <= 0 {
		return fmt.Errorf("--timeout %v must be positive", o.timeout)
	}
	if o.connect <= 0 {
		return fmt.Errorf("--connect-timeout %v must be positive", o.connect)
	}
	started := env.now()
	dial := func(ctx context.Context, target string) (vendors.Driver, error) {
		return plugin.Dial(ctx, target, plugin.WithHandshakeTimeout(o.connect), plugin.WithClientName("parity-conform"))
	}
	d, err := dial(ctx, o.plugin)
	if err != nil {
		return fmt.Errorf("--plugin %s: %w", o.plugin, err)
	}
	defer d.(vendors.Closer).Close()
	// A new connection is what an agent restart looks like to the adapter.
	opts := contract.Options{Root: o.root, Timeout: o.timeout, Now: env.now,
		Reopen: func(ctx context.Context) (vendors.Driver, error) { return dial(ctx, o.plugin) }}
	if o.empty != "" {
		opts.Empty = func(ctx context.Context) (vendors.Driver, error) { return dial(ctx, o.empty) }
	}
	if o.trigger != "" {
		opts.Trigger = func(ctx context.Context) error { return runTrigger(ctx, o.trigger) }
	}
	rs := contract.Check(ctx, d, opts)
	info := d.Info()
	if err := writeContractTable(w, o.plugin, info, rs); err != nil {
		return err
	}
	failed := len(contract.Failures(rs))
	// The inventory the report counts and the certificate records; a
	// failure to discover is already a failed check.
	inv, _ := d.Discover(ctx)
	certify := func(contractOnly bool) error {
		return writeConformCertificate(w, o.out, o.plugin, info, inv, env.now(), contractOnly)
	}
	if !o.contractOnly {
		if why := suiteBlocked(rs); why != "" {
			fmt.Fprintf(w, "\nThe suite does not run: %s\n", why)
		} else {
			return runConformDriverSuite(ctx, w, env, o, dial, info.Vendor, rs, failed, certify)
		}
	}
	if o.out != "" {
		run, err := contractRun(env, o.plugin, info, inv, rs, started)
		if err != nil {
			return err
		}
		paths, err := reports.WriteFolder(o.out, run, reports.HTMLOptions{Now: env.now()})
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "reports: %s, %s, %s\n", paths.HTML, paths.JSON, paths.JUnit)
		if err := certify(true); err != nil {
			return err
		}
	}
	if failed > 0 {
		return fmt.Errorf("driver contract: %d of %d checks failed", failed, len(rs))
	}
	if !o.contractOnly {
		return errors.New("driver contract: the suite could not run")
	}
	return nil
}

// suiteBlocked says why the suite cannot run on the adapter's devices
// ("" when it can): it needs a successful discovery under a vendor name.
func suiteBlocked(rs []contract.Result) string {
	r, ok := contract.Find(rs, contract.CheckDiscover)
	switch {
	case !ok:
		return "no discovery check ran"
	case !r.Passed:
		return contract.SpecID(r.Name) + " did not pass: " + r.Reason
	}
	if r, ok := contract.Find(rs, contract.CheckInfo); !ok || !r.Passed {
		return contract.SpecID(contract.CheckInfo) + " did not pass: " + r.Reason
	}
	return ""
}

// runConformDriverSuite runs the suite on a lab of the adapter and writes
// one report of both, and its certificate; failed counts the contract's
// failed checks.
func runConformDriverSuite(ctx context.Context, w io.Writer, env conformDriverEnv, o conformDriverOptions,
	dial func(context.Context, string) (vendors.Driver, error), vendor string, rs []contract.Result, failed int,
	certify func(contractOnly bool) error) error {
	var focus *regexp.Regexp
	if o.focus != "" {
		re, err := regexp.Compile(o.focus)
		if err != nil {
			return usageError("conform driver", "--focus %q: %v", o.focus, err)
		}
		focus = re
	}
	logDir := o.out
	if logDir == "" {
		d, err := os.MkdirTemp("", "parity-conform-driver-")
		if err != nil {
			return err
		}
		logDir = d
	}
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		return fmt.Errorf("--out %s: %w", logDir, err)
	}
	run, err := runPluginSuite(ctx, w, o, dial, vendor, rs, logDir, focus)
	if err != nil {
		return &exitError{code: 1, err: fmt.Errorf("conform driver: the suite on the adapter's lab: %w", err)}
	}
	run.SuiteVersion = conformance.SuiteVersion
	tty := conformTTY(w)
	if err := reports.WriteMatrix(w, run, tty); err != nil {
		return err
	}
	if o.out != "" {
		paths, err := reports.WriteFolder(o.out, run, reports.HTMLOptions{Now: env.now()})
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "reports: %s, %s, %s\n", paths.HTML, paths.JSON, paths.JUnit)
		if err := certify(false); err != nil {
			return err
		}
	}
	vt, pt := run.Count()
	if n := vt.Failing() + pt.Failing(); n > 0 || failed > 0 {
		return &exitError{code: 1, err: fmt.Errorf("conform driver: %d of %d contract checks failed, %d failing suite results", failed, len(rs), n)}
	}
	return nil
}

// runTrigger runs the operator's fault-injection command.
func runTrigger(ctx context.Context, command string) error {
	out, err := exec.CommandContext(ctx, "/bin/sh", "-c", command).CombinedOutput()
	if err != nil {
		return fmt.Errorf("--trigger %q: %w: %s", command, err, strings.TrimSpace(string(out)))
	}
	return nil
}

func resultWord(r contract.Result) string {
	switch {
	case r.Passed:
		return "pass"
	case r.Skipped:
		return "skip"
	}
	return "FAIL"
}

func writeContractTable(w io.Writer, target string, info vendors.Info, rs []contract.Result) error {
	fmt.Fprintf(w, "driver %s (vendor %s, version %s) at %s\n\n", info.Name, info.Vendor, info.Version, target)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SPEC\tRESULT\tREASON")
	var pass, fail, skip int
	for _, r := range rs {
		switch {
		case r.Passed:
			pass++
		case r.Skipped:
			skip++
		default:
			fail++
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", contract.SpecID(r.Name), resultWord(r), oneLine(r.Reason))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "\n%d passed, %d failed, %d skipped\n", pass, fail, skip)
	return err
}

func oneLine(s string) string {
	s = strings.ReplaceAll(s, "\n", " ")
	if len(s) > 140 {
		s = s[:137] + "..."
	}
	return s
}

// contractRun turns the results into a report tree: one spec per check,
// in the driver-contract area, under the adapter's vendor.
func contractRun(env conformDriverEnv, target string, info vendors.Info, inv gres.Inventory,
	rs []contract.Result, started time.Time) (*reports.Run, error) {
	vendor := info.Vendor
	if vendor == "" {
		vendor = "unnamed-vendor" // the info check has failed; the report still needs a column
	}
	host, err := env.hostname()
	if err != nil {
		host = "unknown"
	}
	v := reports.Vendor{Name: vendor, Driver: info.Name, DriverVersion: info.Version, Devices: len(inv.Devices)}
	if len(inv.Devices) > 0 {
		v.Model = inv.Devices[0].Type
	}
	run := &reports.Run{ID: fmt.Sprintf("driver-contract-%s-%s", vendor, started.UTC().Format("20060102T150405Z")),
		Target: "plugin:" + target, Started: started, Finished: env.now(), ParityVersion: version, Host: host,
		SuiteVersion: conformance.SuiteVersion, Vendors: []reports.Vendor{v}}
	for _, r := range rs {
		s := reports.SpecResult{ID: contract.SpecID(r.Name), Area: reports.AreaDriverContract,
			Name: r.Description, Vendor: vendor, Status: reports.StatusPassed, Reason: r.Reason, Duration: r.Duration}
		switch {
		case r.Skipped:
			s.Status = reports.StatusSkipped
		case r.Failed():
			s.Status = reports.StatusFailed
		}
		if len(r.Evidence) > 0 {
			s.Evidence = []reports.Evidence{{Kind: "log", Text: strings.Join(r.Evidence, "\n")}}
		}
		run.Specs = append(run.Specs, s)
	}
	if err := run.Validate(); err != nil {
		return nil, errors.Join(errors.New("driver contract: the report is invalid"), err)
	}
	return run, nil
}
