package presets

import (
	"context"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// gaudiAdapter is the out-of-tree adapter's command (cmd/gaudi-driver).
const gaudiAdapter = "gaudi-driver"

// hls2Gaudi2 is an HLS-2 board of eight Gaudi 2 cards served by the
// out-of-tree adapter cmd/gaudi-driver over its own simulator, run as its
// own process on a socket the node's agent attaches from its config file:
// the path a site's Gaudi node takes, with no Gaudi code in the lab. The
// host is the CPU-only machine's, which is also the simulator's default
// (cards 0-3 on NUMA node 0's CPUs 0-31,64-95, cards 4-7 on node 1's).
func hls2Gaudi2() Template {
	return Template{Name: "hls2-gaudi2", Description: "Intel Gaudi 2 HLS-2: 8 cards, all-to-all RoCE, on the out-of-tree gaudi-driver adapter (its own process, attached over its socket)",
		Layout: cpuOnly().Layout, adapter: gaudiMachine, adapterEmpty: gaudiEmpty}
}

// gaudiPolicy is the node config entry's policy: probes and reconnects a
// lab can wait for.
const gaudiPolicy = `    connectTimeout: 10s
    callTimeout: 5s
    probeInterval: 1s
    reconnect: {min: 250ms, max: 2s}
`

func gaudiMachine(ctx context.Context, o Options) (*AdapterRun, Faults, error) {
	run, bin, err := startGaudi(ctx, o)
	if err != nil {
		return nil, nil, err
	}
	poll := o.HealthPoll
	if poll <= 0 {
		poll = time.Second // the adapter's default --poll
	}
	return run, gaudiFaults{bin: bin, root: o.Root, poll: poll}, nil
}

// gaudiEmpty is the adapter on the same host without Gaudi cards, as a
// site's node without them runs it.
func gaudiEmpty(ctx context.Context, o Options) (*AdapterRun, error) {
	run, _, err := startGaudi(ctx, o, "--cards", "0")
	return run, err
}

// startGaudi runs the adapter over its simulator in the machine's root:
// the simulator writes its tree there beside the host's, and the agent's
// lab clock restamps what the adapter reports.
func startGaudi(ctx context.Context, o Options, extra ...string) (*AdapterRun, string, error) {
	bin, err := o.FindAdapter(ctx, gaudiAdapter)
	if err != nil {
		return nil, "", err
	}
	sock, tmp, err := adapterSocket(o.Root, "gaudi")
	if err != nil {
		return nil, "", err
	}
	args := append([]string{"serve", "--sim", "--root", o.Root, "--socket", sock, "--seed", strconv.FormatInt(o.Seed, 10)}, extra...)
	if o.HealthPoll > 0 {
		args = append(args, "--poll", o.HealthPoll.String())
	}
	run, err := startAdapter(ctx, adapterStart{name: gaudiAdapter, command: bin, args: args, socket: sock, root: o.Root, tmp: tmp, policy: gaudiPolicy})
	return run, bin, err
}

// gaudiFaults change the simulated cards through the adapter's own inject
// command, which writes the sysfs files the adapter polls. A GPU number is
// the card's local index, which the adapter assigns in bus order, as the
// simulator numbers its accel nodes.
type gaudiFaults struct {
	bin, root string
	poll      time.Duration // the adapter's health poll
}

func (f gaudiFaults) inject(gpu int, args ...string) error {
	full := append([]string{"inject", "--root", f.root, "--card", strconv.Itoa(gpu)}, args...)
	out, err := exec.Command(f.bin, full...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("presets: %s %s: %w: %s", gaudiAdapter, strings.Join(full, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

// Inject maps the lab's fault names onto the card's status attribute:
// fatal is "Needs reset" (a fatal condition, action reset), lost takes
// the card off the bus; ecc-ce (or correctable) and ecc-ue count an HBM
// ECC event in the driver's event counters; the adapter's own names pass
// through.
func (f gaudiFaults) Inject(gpu int, fault string) error {
	switch fault {
	case "fatal":
		fault = "needs-reset"
	case "lost":
		fault = "remove"
	case "correctable":
		fault = "ecc-ce"
	case "needs-reset", "disabled", "hard-reset", "remove", "ecc-ce", "ecc-ue":
	default:
		return fmt.Errorf("presets: fault %q is not one of fatal, lost, correctable, ecc-ce, ecc-ue, needs-reset, disabled, hard-reset, remove", fault)
	}
	return f.inject(gpu, "--fault", fault)
}

func (f gaudiFaults) SetUtilization(gpu, pct int) error {
	return f.inject(gpu, "--fault", "load", "--util", strconv.Itoa(pct))
}

// Repair makes the card Operational again, as a reset does, and returns
// once the adapter has polled the card at least once since: the status is
// a level, not an event, so a fault raised again before that poll would
// look to the adapter as if the card had never left "Needs reset" (a real
// reset takes seconds; the lab's specs fault again at once).
func (f gaudiFaults) Repair(gpu int) error {
	if err := f.inject(gpu, "--fault", "operational"); err != nil {
		return err
	}
	time.Sleep(2 * f.poll)
	return nil
}

// WaitWatched returns at once: the adapter polls the cards' status, and
// the agent attached it (and started its health watch) before the node
// registered.
func (gaudiFaults) WaitWatched(context.Context, int) error { return nil }
