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
	"strings"
	"syscall"
	"time"

	"github.com/parityhpc/parity/cmd/gaudi-driver/gaudisim"
	"github.com/parityhpc/parity/vendors/plugin"
)

const usage = `gaudi-driver serves Intel Gaudi cards to Parity over the out-of-tree
driver protocol (vendors/plugin), reading the habanalabs driver's sysfs and
/dev/accel under --root ("/" on a real host).

Usage:
  gaudi-driver [serve] --socket PATH [--root DIR] [--sim] [--seed N] [--cards N] [--numa-cpus L;L] [--device-nodes] [--poll D]
  gaudi-driver inject --root DIR --card N --fault hard-reset|needs-reset|disabled|operational|remove|load|ecc-ce|ecc-ue [--util PCT]

serve --sim generates a simulated HLS-2 board under --root unless a tree is
already there (so identities and counters survive restarts); --sim without
--root uses a temporary directory removed at exit. inject changes one card
of a simulated tree (N is its accel index) as the driver would; a running
adapter's health watcher reports it at the next poll. load sets what the
INFO ioctl would report as the card's utilisation (--util, percent);
ecc-ce and ecc-ue count one corrected or uncorrectable HBM ECC event in the
driver's event counters, which the adapter reports as ECC errors.

An agent attaches the adapter from its config file (parity agent --config):

  drivers:
    - name: cpu
    - plugin: unix:///run/parity/gaudi.sock

and it is certified with:

  parity conform driver --plugin unix:///run/parity/gaudi.sock --root DIR \
      --trigger 'gaudi-driver inject --root DIR --card 0 --fault hard-reset'
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stderr, nil); err != nil {
		fmt.Fprintln(os.Stderr, "gaudi-driver:", err)
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

type serveFlags struct {
	socket, root  string
	numaCPUs      string
	sim, nodes, v bool
	seed          int64
	cards         int
	poll          time.Duration
}

func parseServe(args []string, stderr io.Writer) (serveFlags, error) {
	var f serveFlags
	fs := newFlags("serve", stderr)
	fs.StringVar(&f.socket, "socket", "", "unix socket to serve on (required)")
	fs.StringVar(&f.root, "root", "", `root of the sysfs and /dev tree (default "/", or a temporary one with --sim)`)
	fs.BoolVar(&f.sim, "sim", false, "generate a simulated HLS-2 board under --root unless one is there")
	fs.Int64Var(&f.seed, "seed", 1, "seed of the simulated identities")
	fs.IntVar(&f.cards, "cards", 8, "simulated cards (0: a host without Gaudi cards)")
	fs.StringVar(&f.numaCPUs, "numa-cpus", "", `the simulated host's CPUs by NUMA node, "LIST;LIST" (default: the lab's CPU host, 0-31,64-95;32-63,96-127)`)
	fs.BoolVar(&f.nodes, "device-nodes", false, "mknod real character devices in the simulated tree (needs root)")
	fs.DurationVar(&f.poll, "poll", time.Second, "how often the health watcher reads the cards")
	fs.BoolVar(&f.v, "v", false, "log every call")
	if err := fs.Parse(args); err != nil {
		return f, err
	}
	switch {
	case f.socket == "":
		fs.Usage()
		return f, errors.New("--socket is required")
	case f.poll <= 0:
		return f, fmt.Errorf("--poll %v must be positive", f.poll)
	case f.cards < 0 || f.cards > 8:
		return f, fmt.Errorf("--cards %d out of range 0..8", f.cards)
	case f.sim && f.root == "/":
		return f, errors.New("--sim would write into /; give --root a directory of its own")
	}
	return f, nil
}

func runServe(ctx context.Context, args []string, stderr io.Writer, ready func()) error {
	f, err := parseServe(args, stderr)
	if err != nil {
		return err
	}
	level := slog.LevelInfo
	if f.v {
		level = slog.LevelDebug
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	dir := f.root
	switch {
	case dir == "" && f.sim:
		tmp, err := os.MkdirTemp("", "gaudi-driver-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		dir = tmp
	case dir == "":
		dir = "/"
	}
	if dir, err = filepath.Abs(dir); err != nil {
		return err
	}
	if f.sim {
		if err := simulate(dir, f, log); err != nil {
			return err
		}
	}
	opts := []Option{WithLogger(log), WithPoll(f.poll)}
	if f.sim {
		opts = append(opts, withMeter(simMeter{root: dir}))
	}
	d := NewDriver(dir, opts...)
	serve := []plugin.ServeOption{plugin.WithServerLogger(log)}
	if ready != nil {
		serve = append(serve, plugin.WithReady(ready))
	}
	return plugin.Serve(ctx, f.socket, d, serve...)
}

// simulate generates the board under dir unless a tree is already there.
func simulate(dir string, f serveFlags, log *slog.Logger) error {
	if _, err := os.Stat(filepath.Join(dir, classDir)); err == nil {
		log.Info("using the existing simulated board", "root", dir)
		return nil
	}
	if f.cards == 0 {
		log.Info("simulating a host without Gaudi cards", "root", dir)
		return nil
	}
	if _, err := gaudisim.Generate(dir, gaudisim.Config{Cards: f.cards, Seed: f.seed, DeviceNodes: f.nodes, NUMACPUs: numaLists(f.numaCPUs)}); err != nil {
		return err
	}
	log.Info("generated a simulated HLS-2 board", "root", dir, "cards", f.cards, "seed", f.seed)
	return nil
}

// numaLists splits --numa-cpus; empty means the simulator's default.
func numaLists(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ";")
}

func runInject(args []string, stderr io.Writer) error {
	fs := newFlags("inject", stderr)
	root := fs.String("root", "", "the simulated tree (the adapter's --root; required)")
	n := fs.Int("card", 0, "the card's accel index")
	fault := fs.String("fault", "hard-reset", "hard-reset, needs-reset, disabled, operational, remove, load, ecc-ce or ecc-ue")
	util := fs.Int("util", 0, "with --fault load: the card's utilisation in percent")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *root == "" {
		fs.Usage()
		return errors.New("--root is required")
	}
	m, err := gaudisim.Open(*root)
	if err != nil {
		return err
	}
	switch *fault {
	case "hard-reset":
		return m.HardReset(*n)
	case "needs-reset":
		return m.SetStatus(*n, gaudisim.StatusNeedsReset)
	case "disabled":
		return m.SetStatus(*n, gaudisim.StatusDisabled)
	case "operational":
		return m.SetStatus(*n, gaudisim.StatusOperational)
	case "remove":
		return m.Remove(*n)
	case "load":
		return m.SetLoad(*n, *util, 0)
	case "ecc-ce", "ecc-ue":
		return injectECC(m, *root, *n, *fault == "ecc-ue")
	}
	return fmt.Errorf("--fault %q is not hard-reset, needs-reset, disabled, operational, remove, load, ecc-ce or ecc-ue", *fault)
}

// injectECC raises the card's family's example HBM ECC event (ecc.go).
func injectECC(m *gaudisim.Machine, root string, n int, uncorrectable bool) error {
	typ, err := readAttr(root, n, "device_type")
	if err != nil {
		return err
	}
	ecc := families[typ].ecc
	if ecc == nil {
		return fmt.Errorf("accel%d is a %q card, whose ECC events the adapter does not know", n, typ)
	}
	id := ecc.example[0]
	if uncorrectable {
		id = ecc.example[1]
	}
	return m.RaiseEvent(n, id)
}
