package conformance

import (
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/parityhpc/parity/labs/labfile"
	"github.com/parityhpc/parity/reports"
	"github.com/parityhpc/parity/scheduler/api"
	"github.com/parityhpc/parity/scheduler/auth"
)

// TestLiveTargetFindsTheLabsVendorsThroughTheAPI points a live target at a
// running lab's controller: from the vendors file and the API alone it must
// find what the lab target knows from inside, and refuse (with reasons)
// what a live cluster cannot offer.
func TestLiveTargetFindsTheLabsVendorsThroughTheAPI(t *testing.T) {
	t.Parallel() // each starts its own lab, under its own cgroup root
	if testing.Short() {
		t.Skip("starts a lab")
	}
	lab, err := labfile.Builtin("default")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	labT, err := NewLab(ctx, LabOptions{Lab: lab})
	if err != nil {
		t.Fatal(err)
	}
	defer labT.Close(context.Background())
	tok, err := labT.Cluster().Token("admin", "")
	if err != nil {
		t.Fatal(err)
	}
	var file strings.Builder
	file.WriteString("vendors:\n")
	for _, v := range labT.Vendors() {
		fmt.Fprintf(&file, "  - name: %s\n    partition: %s\n    feature: %s\n", v.Name, v.Partition, v.Feature)
	}
	vf, err := ParseVendorsFile("vendors.yaml", []byte(file.String()))
	if err != nil {
		t.Fatal(err)
	}
	allowed := labT.Vendors()[0].Nodes[0]
	live, err := NewLive(ctx, LiveOptions{Addr: labT.Cluster().Addr, Token: tok, Vendors: vf, AllowFaults: []string{allowed}})
	if err != nil {
		t.Fatal(err)
	}
	want, got := labT.Vendors(), live.Vendors()
	if len(got) != len(want) {
		t.Fatalf("live vendors %d, lab vendors %d", len(got), len(want))
	}
	for i := range want {
		w, g := want[i], got[i]
		if g.Name != w.Name || !slices.Equal(g.Nodes, w.Nodes) || g.GPUsPerNode != w.GPUsPerNode || g.GPUType != w.GPUType ||
			!slices.Equal(g.Info.VisibleDevicesEnv, w.Info.VisibleDevicesEnv) {
			t.Errorf("live sees %+v\nlab knows %+v", g, w)
		}
	}
	// Each node's inventory comes from what its agent registered, as the
	// lab holds it in-process: files, links and local CPUs included.
	for _, v := range want {
		for _, n := range v.Nodes {
			li, err := live.Inventory(n)
			if err != nil {
				t.Fatalf("live inventory of %s: %v", n, err)
			}
			wi, err := labT.Inventory(n)
			if err != nil {
				t.Fatal(err)
			}
			if !proto.Equal(api.InventoryToProto(li), api.InventoryToProto(wi)) || len(li.Devices) != len(wi.Devices) {
				t.Errorf("live inventory of %s:\n%+v\nlab's:\n%+v", n, li, wi)
			}
		}
	}
	other := want[len(want)-1].Nodes[0]
	if ok, _ := live.MayDisturb(allowed); !ok {
		t.Errorf("%s was allowed with --allow-faults but may not be disturbed", allowed)
	}
	if ok, why := live.MayDisturb(other); ok || !strings.Contains(why, "--allow-faults") {
		t.Errorf("MayDisturb(%s) = %v, %q; want refused naming --allow-faults", other, ok, why)
	}
	for what, err := range map[string]error{
		"faults on an allowed node":     second(live.Faults(allowed)),
		"inventory outside the vendors": second(live.Inventory("no-such-node")),
		"workdir":                       second(live.WorkDir()),
		"switch tree":                   second(live.SwitchTree()),
		"replica":                       third(live.Replica(ctx, allowed)),
	} {
		if !errors.Is(err, ErrNotSupported) || err.Error() == ErrNotSupported.Error() {
			t.Errorf("%s: %v, want ErrNotSupported with a reason", what, err)
		}
	}
	bad, _ := ParseVendorsFile("v.yaml", []byte("vendors:\n  - name: nvidia\n    partition: gpu\n    feature: no-such-feature\n"))
	if _, err := NewLive(ctx, LiveOptions{Addr: labT.Cluster().Addr, Token: tok, Vendors: bad}); !errors.Is(err, ErrVendorsFile) {
		t.Errorf("a vendor matching no node: %v, want ErrVendorsFile", err)
	}
}

func second[T any](_ T, err error) error { return err }

func third[A, B any](_ A, _ B, err error) error { return err }

// liveIdleEnv names the file a live idle-reclamation child run writes its
// report to (ginkgo runs one suite per process).
const liveIdleEnv = "PARITY_CONFORMANCE_LIVEIDLE_REPORT"

// liveIdleMain runs health/idle-reclaim through a live target pointed at a
// lab: no fault hooks, so the GPU must go idle on its own under "sleep" and
// the cluster's own (fast) reclamation policy must act.
func liveIdleMain() int {
	fail := func(err error) int { fmt.Fprintln(os.Stderr, err); return 2 }
	lab, err := labfile.Builtin("default")
	if err != nil {
		return fail(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	labT, err := NewLab(ctx, LabOptions{Lab: lab})
	if err != nil {
		return fail(err)
	}
	defer labT.Close(context.Background())
	// One token is both the suite's user and its admin on a live cluster:
	// the lab's job user, associated with its account, as an admin.
	tok, err := labT.Cluster().Token(JobUser, auth.RoleAdmin)
	if err != nil {
		return fail(err)
	}
	v := labT.Vendors()[0]
	vf, err := ParseVendorsFile("vendors.yaml", fmt.Appendf(nil, "vendors:\n  - name: %s\n    partition: %s\n    feature: %s\n", v.Name, v.Partition, v.Feature))
	if err != nil {
		return fail(err)
	}
	live, err := NewLive(ctx, LiveOptions{Addr: labT.Cluster().Addr, Token: tok, Vendors: vf, AllowFaults: v.Nodes})
	if err != nil {
		return fail(err)
	}
	run, err := Run(ctx, live, Options{Focus: regexp.MustCompile(`^health/idle-reclaim `), Account: "lab", JobTimeout: time.Minute})
	if err != nil {
		return fail(err)
	}
	if err := writeChildRun(liveIdleEnv, run); err != nil {
		return fail(err)
	}
	return 0
}

// TestLiveIdleReclaimNeedsNoFaultHooks: on a live cluster an idle job is
// reclaimed by the cluster's own policy, which the suite reads over the API.
func TestLiveIdleReclaimNeedsNoFaultHooks(t *testing.T) {
	t.Parallel() // each starts its own lab, under its own cgroup root
	if testing.Short() {
		t.Skip("starts a lab and waits out its idle window")
	}
	run, _ := childRun(t, liveIdleEnv)
	ran := false
	for _, s := range run.Specs {
		if s.ID != "health/idle-reclaim" || s.Vendor == "" || strings.HasPrefix(s.ID, "parity/") {
			continue
		}
		ran = true
		if s.Status != reports.StatusPassed {
			t.Errorf("%s [%s]: %s: %s", s.ID, s.Vendor, s.Status, s.Reason)
		}
	}
	if !ran {
		t.Error("health/idle-reclaim did not report")
	}
}
