package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"

	"github.com/parityhpc/parity/conformance"
	"github.com/parityhpc/parity/labs/cluster"
	"github.com/parityhpc/parity/labs/labfile"
	"github.com/parityhpc/parity/labs/presets"
	"github.com/parityhpc/parity/reports"
	"github.com/parityhpc/parity/vendors"
	"github.com/parityhpc/parity/vendors/contract"
)

// Names of the one-node lab `conform driver` builds around an adapter.
const (
	pluginTemplate = "plugin"
	pluginNode     = "plugin-1"
	pluginFeature  = "plugin"
)

// pluginLab is a lab of one node whose accelerator is the adapter (its
// host is the built-in CPU-only machine's): one socket serves one host's
// devices, so a second node would report the same UUIDs.
func pluginLab() *labfile.Lab {
	return &labfile.Lab{Name: "plugin", Seed: 1,
		Nodes:      []labfile.NodeSet{{Names: pluginNode, Template: pluginTemplate, Features: []string{pluginFeature}}},
		Partitions: []labfile.Partition{{Name: "plugin", Nodes: pluginNode, Default: true}}}
}

// runPluginSuite runs the conformance suite on the plugin lab. The
// adapter's contract results rs (taken directly, with the command's
// options) stand for the suite's driver-contract specs, so the report
// holds each check once, under its contract.SpecID. Logs go to logDir.
func runPluginSuite(ctx context.Context, w io.Writer, o conformDriverOptions, dial func(context.Context, string) (vendors.Driver, error),
	vendor string, rs []contract.Result, logDir string, focus *regexp.Regexp) (*reports.Run, error) {
	tmpl, err := presets.Custom(pluginTemplate, "a CPU-only host whose accelerator is the adapter at "+o.plugin, "cpu",
		func(ctx context.Context, _ presets.Options) (vendors.Driver, presets.Faults, error) {
			// A new connection per build, as an agent (re)start makes. The
			// lab cannot fault the adapter's hardware: fault specs skip.
			d, err := dial(ctx, o.plugin)
			return d, nil, err
		})
	if err != nil {
		return nil, err
	}
	logf, err := os.Create(filepath.Join(logDir, "lab.log"))
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	logger := slog.New(slog.NewTextHandler(logf, nil))
	lab := pluginLab()
	fmt.Fprintf(w, "\nStarting a lab of one node (%s) on the adapter's devices; logs in %s …\n", pluginNode, logDir)
	t, err := conformance.NewLab(ctx, conformance.LabOptions{Lab: lab, Logger: logger,
		Templates: map[string]presets.Template{pluginTemplate: tmpl}})
	if err != nil {
		return nil, err
	}
	defer func() {
		if err := t.Close(context.WithoutCancel(ctx)); err != nil {
			fmt.Fprintln(w, "parity: conform driver: stopping the lab:", err)
		}
	}()
	if ok, why := t.Isolation(); !ok {
		fmt.Fprintf(w, "WARNING: jobs run without isolation (%s); isolation specs will be skipped\n", why)
	}
	restore, out, err := conformDivertStdout(filepath.Join(logDir, "ginkgo.log"), w)
	if err != nil {
		return nil, err
	}
	prog := &conformProgress{w: out, tty: conformTTY(out)}
	run, err := conformance.Run(ctx, t, conformance.Options{Focus: focus, Account: "lab", ExemptAccount: cluster.ExemptAccount,
		Contract: map[string][]contract.Result{vendor: rs}, ContractTimeout: o.timeout,
		Progress: prog.update, Version: version, Logger: logger})
	prog.finish()
	restore()
	if err != nil {
		return nil, err
	}
	run.Target = "plugin:" + o.plugin
	return run, nil
}
