package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/parityhpc/parity/vendors/plugin"
)

const usage = `example-driver serves a simulated ExampleGPU vendor to Parity over the
out-of-tree driver protocol (vendors/plugin).

Usage:
  example-driver [serve] --socket PATH [--root DIR] [--seed N] [--devices N] [--device-nodes] [--poll D]
  example-driver inject --root DIR --device N [--count N]

serve generates the simulated hardware under --root unless a tree is already
there (so identities and fault counters survive restarts); without --root it
uses a temporary directory removed at exit. inject adds uncorrectable memory
errors to one GPU of a running adapter's tree, which its health watcher
reports at the next poll.
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stderr, nil); err != nil {
		fmt.Fprintln(os.Stderr, "example-driver:", err)
		os.Exit(1)
	}
}

// run is main without the process: ready, when set, is called once the
// socket accepts connections.
func run(ctx context.Context, args []string, stderr io.Writer, ready func()) error {
	if len(args) > 0 && args[0] == "inject" {
		return runInject(args[1:], stderr)
	}
	if len(args) > 0 && args[0] == "serve" {
		args = args[1:]
	}
	return runServe(ctx, args, stderr, ready)
}

func newFlags(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, usage); fs.PrintDefaults() }
	return fs
}

func runServe(ctx context.Context, args []string, stderr io.Writer, ready func()) error {
	fs := newFlags("serve", stderr)
	socket := fs.String("socket", "", "unix socket to serve on (required)")
	root := fs.String("root", "", "directory holding the simulated hardware (default: a temporary one)")
	seed := fs.Int64("seed", 1, "seed of the generated identities")
	devices := fs.Int("devices", 4, "GPUs to generate (0: a host without ExampleGPUs)")
	nodes := fs.Bool("device-nodes", false, "mknod real character devices (needs root) instead of placeholder files")
	poll := fs.Duration("poll", time.Second, "how often the health watcher reads the fault counters")
	verbose := fs.Bool("v", false, "log every call")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *socket == "" {
		fs.Usage()
		return errors.New("--socket is required")
	}
	if *poll <= 0 {
		return fmt.Errorf("--poll %v must be positive", *poll)
	}
	level := slog.LevelInfo
	if *verbose {
		level = slog.LevelDebug
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	dir := *root
	if dir == "" {
		tmp, err := os.MkdirTemp("", "example-driver-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		dir = tmp
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join(dir, classDir)); errors.Is(err, os.ErrNotExist) {
		if err := generate(dir, hwConfig{Devices: *devices, Seed: *seed, DeviceNodes: *nodes}); err != nil {
			return err
		}
		log.Info("generated simulated ExampleGPUs", "root", dir, "devices", *devices, "seed", *seed)
	} else {
		log.Info("using the existing simulated hardware", "root", dir)
	}
	d := NewDriver(dir, WithLogger(log), WithPoll(*poll))
	opts := []plugin.ServeOption{plugin.WithServerLogger(log)}
	if ready != nil {
		opts = append(opts, plugin.WithReady(ready))
	}
	return plugin.Serve(ctx, *socket, d, opts...)
}

func runInject(args []string, stderr io.Writer) error {
	fs := newFlags("inject", stderr)
	root := fs.String("root", "", "the adapter's --root (required)")
	device := fs.Int("device", 0, "GPU index (exgN)")
	count := fs.Uint64("count", 1, "uncorrectable errors to add")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *root == "" {
		fs.Usage()
		return errors.New("--root is required")
	}
	if *count == 0 {
		return errors.New("--count must be at least 1")
	}
	return injectFaults(*root, *device, *count)
}
