package contract

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/parityhpc/parity/gres"
	"github.com/parityhpc/parity/vendors"
)

// envName is what a shell accepts as a variable name.
var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

func checkInfo(_ context.Context, s *state) verdict {
	var v verdict
	info := s.d.Info()
	if info.Name == "" {
		v.failf("Info.Name is empty")
	}
	if info.Vendor == "" {
		v.failf("Info.Vendor is empty")
	}
	v.seef("name=%q vendor=%q version=%q capabilities=%v visible=%v",
		info.Name, info.Vendor, info.Version, info.Capabilities, info.VisibleDevicesEnv)
	if len(s.inv.Devices) > 0 && len(info.VisibleDevicesEnv) == 0 {
		v.failf("Info.VisibleDevicesEnv is empty although the driver has %d devices", len(s.inv.Devices))
	}
	for _, e := range info.VisibleDevicesEnv {
		if !envName.MatchString(e) {
			v.failf("Info.VisibleDevicesEnv holds %q, which is not a variable name", e)
		}
	}
	implements := map[vendors.Capability]bool{vendors.CapPartitions: true}
	_, implements[vendors.CapSamples] = s.d.(vendors.Sampler)
	_, implements[vendors.CapHealth] = s.d.(vendors.HealthWatcher)
	_, implements[vendors.CapDiagnose] = s.d.(vendors.Diagnoser)
	_, implements[vendors.CapRepartition] = s.d.(vendors.Partitioner)
	for _, c := range info.Capabilities {
		has, known := implements[c]
		switch {
		case !known:
			v.failf("Info advertises unknown capability %q", c)
		case !has:
			v.failf("Info advertises %q but the driver does not implement it", c)
		}
	}
	for _, c := range []vendors.Capability{vendors.CapSamples, vendors.CapHealth, vendors.CapDiagnose, vendors.CapRepartition} {
		if implements[c] && !info.Has(c) {
			v.failf("the driver implements %q but Info does not advertise it", c)
		}
	}
	return v
}

// identity is what must not change for a UUID between discoveries.
func identity(d gres.Device) string {
	return fmt.Sprintf("%s index=%d bus=%s type=%s parent=%s", d.UUID, d.Index, d.PCIBusID, d.Type, d.Parent)
}

// compareIdentities reports devices that appeared, vanished or changed.
func compareIdentities(v *verdict, what string, a, b gres.Inventory) {
	before := map[string]string{}
	for _, d := range a.Devices {
		before[d.UUID] = identity(d)
	}
	after := map[string]string{}
	for _, d := range b.Devices {
		after[d.UUID] = identity(d)
		switch was, ok := before[d.UUID]; {
		case !ok:
			v.failf("%s reports UUID %s, which the first discovery did not (%s)", what, d.UUID, identity(d))
		case was != after[d.UUID]:
			v.failf("%s changed device %s: %s, was %s", what, d.UUID, after[d.UUID], was)
		}
	}
	for _, d := range a.Devices {
		if _, ok := after[d.UUID]; !ok {
			v.failf("%s lost UUID %s (%s)", what, d.UUID, identity(d))
		}
	}
	if len(v.problems) == 0 {
		v.seef("%d devices, same UUIDs, indices and bus ids", len(b.Devices))
	}
}

func checkStable(ctx context.Context, s *state) verdict {
	var v verdict
	if v.skip = s.needInventory(); v.skip != "" {
		return v
	}
	again, err := s.d.Discover(ctx)
	if err != nil {
		v.failf("second Discover: %v", err)
		return v
	}
	compareIdentities(&v, "the second Discover", s.inv, again)
	return v
}

func checkReopen(ctx context.Context, s *state) verdict {
	var v verdict
	if v.skip = s.needInventory(); v.skip != "" {
		return v
	}
	if s.opts.Reopen == nil {
		v.skip = "no way to re-create the driver was given (Options.Reopen)"
		return v
	}
	d2, err := s.opts.Reopen(ctx)
	if err != nil {
		v.failf("re-creating the driver: %v", err)
		return v
	}
	defer closeDriver(d2)
	inv, err := d2.Discover(ctx)
	if err != nil {
		v.failf("Discover on the re-created driver: %v", err)
		return v
	}
	compareIdentities(&v, "the re-created driver", s.inv, inv)
	return v
}

func checkNotApplicable(ctx context.Context, s *state) verdict {
	var v verdict
	if s.opts.Empty == nil {
		v.skip = "no empty host was given (Options.Empty)"
		return v
	}
	d, err := s.opts.Empty(ctx)
	if err != nil {
		v.failf("building the driver over an empty host: %v", err)
		return v
	}
	defer closeDriver(d)
	inv, err := d.Discover(ctx)
	switch {
	case errors.Is(err, vendors.ErrNotApplicable):
		v.seef("Discover: %v", err)
	case err != nil:
		v.failf("Discover on an empty host failed with %q, which does not wrap vendors.ErrNotApplicable", err)
	default:
		v.failf("Discover on an empty host succeeded with %d devices; want vendors.ErrNotApplicable", len(inv.Devices))
	}
	return v
}

// fileUse is one device file and who lists it.
type fileUse struct {
	f      gres.DeviceFile
	owners []string // device UUIDs, or "shared"
}

func collectFiles(inv gres.Inventory) []*fileUse {
	var out []*fileUse
	byPath := map[string]*fileUse{}
	add := func(f gres.DeviceFile, owner string) {
		u, ok := byPath[f.Path]
		if !ok {
			u = &fileUse{f: f}
			byPath[f.Path] = u
			out = append(out, u)
		}
		if !slices.Contains(u.owners, owner) {
			u.owners = append(u.owners, owner)
		}
	}
	for _, d := range inv.Devices {
		for _, f := range d.Files {
			add(f, d.UUID)
		}
	}
	for _, f := range inv.SharedFiles {
		add(f, "shared")
	}
	return out
}

func checkDeviceFiles(_ context.Context, s *state) verdict {
	var v verdict
	if v.skip = s.needInventory(); v.skip != "" {
		return v
	}
	for _, d := range s.inv.Devices {
		if len(d.Files) == 0 {
			v.failf("device %s lists no device files, so a job could not be given it", d.UUID)
		}
	}
	numbers := map[[2]uint32]string{}
	var placeholders []string
	for _, u := range collectFiles(s.inv) {
		for _, d := range s.inv.Devices {
			for _, f := range d.Files {
				if f.Path == u.f.Path && f != u.f {
					v.failf("%s is listed as %d:%d by %s and as %d:%d elsewhere", f.Path, f.Major, f.Minor, d.UUID, u.f.Major, u.f.Minor)
				}
			}
		}
		if other, dup := numbers[[2]uint32{u.f.Major, u.f.Minor}]; dup {
			v.failf("%s and %s both claim %d:%d", other, u.f.Path, u.f.Major, u.f.Minor)
		}
		numbers[[2]uint32{u.f.Major, u.f.Minor}] = u.f.Path
		placeholder, err := checkFile(s.opts.Root, u.f)
		if err != nil {
			v.failf("%v (listed by %s)", err, strings.Join(u.owners, ", "))
			continue
		}
		if placeholder {
			placeholders = append(placeholders, u.f.String())
		} else {
			v.seef("%s is a character device with the reported numbers", u.f)
		}
	}
	if len(placeholders) > 0 && len(v.problems) == 0 {
		v.note = fmt.Sprintf("%d device files are placeholders (not character devices), so their numbers could not be checked", len(placeholders))
		for _, p := range placeholders {
			v.seef("placeholder: %s", p)
		}
	}
	return v
}

// checkFile verifies one device file; placeholder means it exists but is
// not a character device (simulated hardware without mknod).
func checkFile(root string, f gres.DeviceFile) (placeholder bool, err error) {
	if !filepath.IsAbs(f.Path) {
		return false, fmt.Errorf("device file path %q is not absolute", f.Path)
	}
	if root != "" {
		rel, err := filepath.Rel(root, f.Path)
		if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
			return false, fmt.Errorf("device file %s lies outside the root %s", f.Path, root)
		}
	}
	if f.Major == 0 {
		return false, fmt.Errorf("device file %s has major 0, which no character driver has", f)
	}
	fi, err := os.Stat(f.Path)
	if err != nil {
		return false, fmt.Errorf("device file %s: %w", f, err)
	}
	if fi.Mode()&os.ModeCharDevice == 0 {
		if !fi.Mode().IsRegular() {
			return false, fmt.Errorf("device file %s is neither a character device nor a placeholder file (mode %v)", f, fi.Mode())
		}
		return true, nil
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return false, fmt.Errorf("device file %s: cannot read its device numbers", f)
	}
	major, minor := unix.Major(st.Rdev), unix.Minor(st.Rdev)
	if major != f.Major || minor != f.Minor {
		return false, fmt.Errorf("device file %s is %d:%d on disk", f, major, minor)
	}
	return false, nil
}
