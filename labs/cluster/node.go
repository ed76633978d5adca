package cluster

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/parityhpc/parity/labs/labfile"
	"github.com/parityhpc/parity/labs/presets"
	"github.com/parityhpc/parity/vendors"
)

// FaultPoll is how often a lab node's polled backends (AMD's RAS
// counters) look for faults: four times per sample, so a fault raised on
// a lab, which something is always waiting to see drain its GPU, is
// seen within a quarter of a second rather than a whole one. A poll
// reads a few counters per GPU.
const FaultPoll = SampleInterval / 4

// LabFile is where a lab instance keeps the lab it runs, so a separate
// agent process (`parity agent --sim-lab DIR`) builds the same hardware.
const LabFile = "lab.yaml"

// nodeDirs are where a lab node keeps its simulated machine and its spool.
func nodeDirs(dir, node string) (root, spool string) {
	return filepath.Join(dir, "nodes", node, "root"), filepath.Join(RuntimeDir(dir), node)
}

// RuntimeDir is where the lab instance in dir keeps its nodes' spools: on
// tmpfs (/dev/shm/parity-lab-ID, ID from dir as for CgroupRoot) when there
// is one, as an agent keeps its own under /run by default, else in dir.
// A spool holds each job's record and status only while the job is on
// the node: nothing there outlives a reboot usefully, and on a disk
// file system the create and delete of those files per job cost the
// journal more than the rest of a short job's launch. Down removes it.
func RuntimeDir(dir string) string {
	if !usableTmpfs(shmDir, 0) {
		return filepath.Join(dir, "run")
	}
	id, err := instanceID(dir)
	if err != nil {
		return filepath.Join(dir, "run")
	}
	return filepath.Join(shmDir, "parity-lab-"+id)
}

// shmDir is the tmpfs every Linux system mounts for POSIX shared memory.
const shmDir = "/dev/shm"

// RemoveRuntimeDir removes the lab's spools when they live outside dir.
func RemoveRuntimeDir(dir string) error {
	rd := RuntimeDir(dir)
	if strings.HasPrefix(rd, filepath.Clean(dir)+string(filepath.Separator)) {
		return nil // left with the directory, for inspection
	}
	if err := os.RemoveAll(rd); err != nil {
		return fmt.Errorf("cluster: remove node spools: %w", err)
	}
	return nil
}

// NodeSpool is the spool directory of a lab node.
func NodeSpool(dir, node string) string {
	_, spool := nodeDirs(dir, node)
	return spool
}

// buildNode builds the simulated machine of the lab node called name
// under dir. Its seed follows the node's place in the lab, so every
// process that builds it gets the same device identities.
func buildNode(ctx context.Context, lab *labfile.Lab, dir, name string, extra map[string]presets.Template) (*presets.Machine, labfile.Node, error) {
	return buildNodeAt(ctx, lab, dir, name, extra, nodeBuild{finder: newAdapterFinder(dir)})
}

// nodeBuild is what a lab instance shares among its nodes' builds.
type nodeBuild struct {
	// now is the clock the drivers stamp samples and conditions with (nil:
	// the host's), so a lab on simulated time sees its hardware at that
	// time too.
	now    func() time.Time
	finder *adapterFinder
	log    *slog.Logger
}

// buildNodeAt is buildNode with the lab instance's clock, adapter finder
// and logger.
func buildNodeAt(ctx context.Context, lab *labfile.Lab, dir, name string, extra map[string]presets.Template, b nodeBuild) (*presets.Machine, labfile.Node, error) {
	tmpl, opts, n, err := nodeTemplate(lab, dir, name, extra, b)
	if err != nil {
		return nil, n, err
	}
	m, err := BuildMachine(ctx, tmpl, opts, b.log)
	return m, n, err
}

// nodeTemplate is the template lab node name is built from and the
// options that build it under dir.
func nodeTemplate(lab *labfile.Lab, dir, name string, extra map[string]presets.Template, b nodeBuild) (presets.Template, presets.Options, labfile.Node, error) {
	for i, n := range lab.NodeList() {
		if n.Name != name {
			continue
		}
		tmpl, err := LookupTemplate(n.Template, extra)
		if err != nil {
			return tmpl, presets.Options{}, n, err
		}
		tmpl.Layout = n.Layout(tmpl.Layout)
		// The spool is the agent's to make (launch.New), and Down's to remove.
		root, _ := nodeDirs(dir, n.Name)
		if err := os.MkdirAll(root, 0o755); err != nil {
			return tmpl, presets.Options{}, n, err
		}
		return tmpl, presets.Options{Root: root, Seed: lab.Seed + int64(i), Hostname: n.Name, HealthPoll: FaultPoll,
			Now: b.now, FindAdapter: b.finder.find}, n, nil
	}
	return presets.Template{}, presets.Options{}, labfile.Node{}, fmt.Errorf("cluster: lab %s has no node %q", lab.Name, name)
}

// SimNode builds, for an agent running as its own process, the drivers of
// lab node name of the lab instance in dir (started by UpProcesses): the
// same simulated machine the in-process lab gives that node. With
// deviceNodes, the machine's device files become real character devices
// (root only), so cgroup device rules apply to them. close releases the
// machine.
func SimNode(ctx context.Context, dir, name string, deviceNodes bool) (drivers []vendors.Driver, close func() error, err error) {
	lab, err := labfile.Load(filepath.Join(dir, LabFile))
	if err != nil {
		return nil, nil, fmt.Errorf("cluster: --sim-lab %s: %w", dir, err)
	}
	m, _, err := buildNode(ctx, lab, dir, name, nil)
	if err != nil {
		return nil, nil, err
	}
	if deviceNodes {
		if err := MakeDriversDeviceNodes(ctx, m.Drivers); err != nil {
			m.Close()
			return nil, nil, fmt.Errorf("cluster: node %s: %w", name, err)
		}
	}
	return m.Drivers, m.Close, nil
}

// LookupTemplate finds a node template among the caller's extra ones,
// then the built-in ones.
func LookupTemplate(name string, extra map[string]presets.Template) (presets.Template, error) {
	if t, ok := extra[name]; ok {
		return t, nil
	}
	return presets.Lookup(name)
}
