package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/parityhpc/parity/gres"
	"github.com/parityhpc/parity/labs/presets"
	"github.com/parityhpc/parity/topology"
	"github.com/parityhpc/parity/vendors"
	"github.com/parityhpc/parity/vendors/builtin"
)

func newDevicesCmd() *cobra.Command {
	var simName, root string
	var asJSON bool
	var seed int64
	var best int
	cmd := &cobra.Command{
		Use:   "devices",
		Short: "Show the devices the vendor drivers discover on this host or on a simulated machine",
		Long: `Runs every in-tree vendor driver and prints what they discover: GPUs with
UUID, type, PCI bus id, NUMA node, local CPUs, memory, device files and
links, then the fast-link islands and the devices the placement code would
choose for a job asking for --best of them. The in-tree drivers:

` + inTreeDriverSummaries() + `
With --sim, the same real drivers run on a built-in simulated machine (each
vendor's management library mocked, or its sysfs and device tree generated,
and a generated host CPU tree) instead of this host's hardware. Templates:
` + strings.Join(presets.Names(), ", ") + `.`,
		Example: `  parity devices
  parity devices --sim dgx-h100
  parity devices --sim mi300x --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			var drivers []vendors.Driver
			label := "this host"
			if simName != "" {
				tmpl, err := presets.Lookup(simName)
				if err != nil {
					return err
				}
				dir := root
				if dir == "" {
					tmp, err := os.MkdirTemp("", "parity-devices-")
					if err != nil {
						return err
					}
					defer os.RemoveAll(tmp)
					dir = tmp
				}
				m, err := tmpl.Build(ctx, presets.Options{Root: dir, Seed: seed, Hostname: "sim-" + simName})
				if err != nil {
					return err
				}
				defer m.Close()
				drivers, label = m.Drivers, fmt.Sprintf("simulated %s (%s)", simName, tmpl.Description)
			} else {
				drivers = builtin.Drivers(builtin.Options{})
				defer builtin.Close(drivers)
			}
			found, err := vendors.DiscoverAll(ctx, drivers)
			if err != nil {
				return err
			}
			view := newDevicesView(label, found, best)
			if simName != "" && root != "" {
				view.Root = root
			}
			if asJSON {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(view)
			}
			view.render(cmd.OutOrStdout())
			return nil
		},
	}
	cmd.Flags().StringVar(&simName, "sim", "", "run the drivers on a built-in simulated machine (template name)")
	cmd.Flags().StringVar(&root, "root", "", "directory for the simulated machine's files (default: a temporary directory, removed afterwards)")
	cmd.Flags().Int64Var(&seed, "seed", 1, "seed for simulated device identities")
	cmd.Flags().IntVar(&best, "best", 4, "show the devices chosen for a job asking for this many GPUs (0 to skip)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON instead of a table")
	return cmd
}

// devicesView is what `parity devices` prints, as a table or as JSON.
type devicesView struct {
	Source string `json:"source"`
	// Root is the simulated machine's directory; device file paths lie under it.
	Root        string            `json:"root,omitempty"`
	Drivers     []vendors.Info    `json:"drivers"`
	Skipped     map[string]string `json:"skipped,omitempty"`
	Host        *gres.Host        `json:"host,omitempty"`
	Devices     []gres.Device     `json:"devices"`
	SharedFiles []gres.DeviceFile `json:"sharedFiles,omitempty"`
	Islands     [][]int           `json:"islands"`
	Best        *bestView         `json:"best,omitempty"`
}

type bestView struct {
	Want      int             `json:"want"`
	Type      string          `json:"type"`
	Devices   []int           `json:"devices"`
	UUIDs     []string        `json:"uuids"`
	Islands   int             `json:"islands"`
	NUMANodes []int           `json:"numaNodes"`
	LocalCPUs topology.CPUSet `json:"localCpus"`
}

func newDevicesView(source string, found vendors.Discovered, want int) devicesView {
	inv := found.Inventory
	v := devicesView{Source: source, Skipped: found.Skipped, Host: inv.Host, Devices: inv.Devices,
		SharedFiles: inv.SharedFiles, Islands: inv.Graph().Islands()}
	for _, d := range found.Active {
		v.Drivers = append(v.Drivers, d.Info())
	}
	if v.Devices == nil {
		v.Devices = []gres.Device{}
	}
	if want > 0 && len(inv.Devices) >= want {
		v.Best = chooseBest(inv, want)
	}
	return v
}

// chooseBest picks want whole devices of the most common type with the same
// function the node allocator uses.
func chooseBest(inv gres.Inventory, want int) *bestView {
	typ := mostCommonType(inv)
	alloc := gres.NewNodeAllocations(inv)
	uuids, cpus, err := alloc.Select(typ, want)
	if err != nil {
		return nil
	}
	b := &bestView{Want: want, Type: typ, UUIDs: uuids, LocalCPUs: cpus}
	isle := inv.Graph().IslandIndex()
	isles, numas := map[int]bool{}, map[int]bool{}
	for i, d := range inv.Devices {
		for _, u := range uuids {
			if d.UUID == u {
				b.Devices = append(b.Devices, i)
				isles[isle[i]] = true
				numas[d.NUMANode] = true
			}
		}
	}
	b.Islands = len(isles)
	for n := range numas {
		b.NUMANodes = append(b.NUMANodes, n)
	}
	sort.Ints(b.NUMANodes)
	return b
}

func mostCommonType(inv gres.Inventory) string {
	count := map[string]int{}
	best := ""
	for _, d := range inv.Devices {
		if d.Parent != "" {
			continue
		}
		count[d.Type]++
		if count[d.Type] > count[best] || (count[d.Type] == count[best] && d.Type < best) {
			best = d.Type
		}
	}
	return best
}

func (v devicesView) render(w io.Writer) {
	fmt.Fprintf(w, "Source: %s\n", v.Source)
	if h := v.Host; h != nil {
		fmt.Fprintf(w, "Host: %s  CPUs %d (%s)  sockets %d  cores %d  memory %s  NUMA nodes %d\n",
			orDash(h.Hostname), h.CPUs.Count(), h.CPUs, h.Sockets, h.Cores, bytesLabel(h.MemoryBytes), len(h.NUMA))
		for _, n := range h.NUMA {
			fmt.Fprintf(w, "  numa%d: cpus %s, memory %s\n", n.ID, n.CPUs, bytesLabel(n.MemoryBytes))
		}
	}
	for _, d := range v.Drivers {
		fmt.Fprintf(w, "Driver: %s %s (vendor %s)\n", d.Name, orDash(d.Version), d.Vendor)
	}
	for _, name := range sortedKeys(v.Skipped) {
		fmt.Fprintf(w, "Skipped: %s: %s\n", name, v.Skipped[name])
	}
	if len(v.Devices) == 0 {
		fmt.Fprintln(w, "No accelerators found.")
		return
	}
	files := func(fs []gres.DeviceFile) string { return filesLabel(fs, v.simRoot()) }
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "IDX\tVENDOR\tTYPE\tUUID\tPCI\tNUMA\tLOCAL CPUS\tMEMORY\tFILES\tLINKS")
	pos := map[string]int{}
	for i, d := range v.Devices {
		pos[d.UUID] = i
	}
	for i, d := range v.Devices {
		typ := d.Type
		if d.Parent != "" {
			typ += " (part of " + fmt.Sprint(pos[d.Parent]) + ")"
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%d\t%s\t%s\t%s\t%s\n", i, d.Vendor, typ, d.UUID, orDash(d.PCIBusID),
			d.NUMANode, orDash(d.LocalCPUs.String()), bytesLabel(d.MemoryBytes), files(d.Files), linksLabel(d.Links, pos))
	}
	tw.Flush()
	if len(v.SharedFiles) > 0 {
		fmt.Fprintf(w, "Shared device files: %s\n", files(v.SharedFiles))
	}
	var isles []string
	for _, isle := range v.Islands {
		isles = append(isles, "["+intsLabel(isle)+"]")
	}
	fmt.Fprintf(w, "Fast-link islands: %s\n", strings.Join(isles, " "))
	if b := v.Best; b != nil {
		fmt.Fprintf(w, "Best %d %s for one job: devices %s — %d island(s), NUMA node(s) %s, local CPUs %s\n",
			b.Want, b.Type, intsLabel(b.Devices), b.Islands, intsLabel(b.NUMANodes), b.LocalCPUs)
	}
}

// simRoot is the prefix the table strips from simulated device paths so
// they read as on a real host; JSON keeps the full paths.
func (v devicesView) simRoot() string {
	if v.Root != "" {
		return v.Root
	}
	if strings.HasPrefix(v.Source, "simulated") {
		for _, d := range v.Devices {
			for _, f := range d.Files {
				if i := strings.Index(f.Path, "/dev/"); i > 0 {
					return f.Path[:i]
				}
			}
		}
	}
	return ""
}

func filesLabel(fs []gres.DeviceFile, root string) string {
	parts := make([]string, len(fs))
	for i, f := range fs {
		f.Path = strings.TrimPrefix(f.Path, strings.TrimSuffix(root, "/"))
		parts[i] = f.String()
	}
	return orDash(strings.Join(parts, ", "))
}

// linksLabel summarises links by kind: "nvlink→1,2,3 (450 GB/s each)".
func linksLabel(ls []gres.Link, pos map[string]int) string {
	byKind := map[string][]int{}
	bw := map[string]map[float64]bool{}
	for _, l := range ls {
		k := string(l.Kind)
		byKind[k] = append(byKind[k], pos[l.Peer])
		if bw[k] == nil {
			bw[k] = map[float64]bool{}
		}
		bw[k][l.BandwidthGBps] = true
	}
	var parts []string
	for _, k := range sortedKeys(byKind) {
		sort.Ints(byKind[k])
		p := k + "→" + intsLabel(byKind[k])
		if len(bw[k]) == 1 {
			for b := range bw[k] {
				if b > 0 {
					p += fmt.Sprintf(" (%g GB/s each)", b)
				}
			}
		}
		parts = append(parts, p)
	}
	return orDash(strings.Join(parts, "; "))
}

func intsLabel(xs []int) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = fmt.Sprint(x)
	}
	return strings.Join(parts, ",")
}

func bytesLabel(b uint64) string {
	const gib = 1 << 30
	switch {
	case b == 0:
		return "-"
	case b >= 1<<40:
		return fmt.Sprintf("%.1f TiB", float64(b)/(1<<40))
	default:
		return fmt.Sprintf("%.0f GiB", float64(b)/gib)
	}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
