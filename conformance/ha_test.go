package conformance

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/parityhpc/parity/labs/labfile"
	"github.com/parityhpc/parity/reports"
)

// haEnv names the file an HA child run writes its report to, and
// haControllersEnv how many controllers its lab runs.
const (
	haEnv            = "PARITY_CONFORMANCE_HA_REPORT"
	haControllersEnv = "PARITY_CONFORMANCE_HA_CONTROLLERS"
)

// haLab has two vendors, so the leader is stopped twice in one run: the
// second time after the first stopped controller was restarted.
const haLab = `name: ha
seed: 5
nodes:
  - names: vm-1
    template: gpu-vm
  - names: cpu-1
    template: cpu
    features: [cpu]
partitions:
  - name: gpu
    nodes: vm-1
    default: true
  - name: cpu
    nodes: cpu-1
`

var haFocus = regexp.MustCompile(`^ha/leader-failover `)

// haMain runs the HA spec alone on haLab with the controllers haControllersEnv says.
func haMain() int {
	n, _ := strconv.Atoi(os.Getenv(haControllersEnv))
	lab, err := labfile.Parse("ha.yaml", []byte(haLab))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	target, err := NewLab(ctx, LabOptions{Lab: lab, Controllers: n})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	defer target.Close(context.Background())
	run, err := Run(ctx, target, Options{Focus: haFocus, Account: "lab", JobTimeout: time.Minute})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	if err := writeChildRun(haEnv, run); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	return 0
}

// The HA spec on a lab of three controllers stops the leader amid the
// stream once per vendor and passes; on a lab of one it is skipped, saying
// why.
func TestLeaderFailoverSpec(t *testing.T) {
	t.Parallel() // each starts its own lab, under its own cgroup root
	if testing.Short() {
		t.Skip("starts a lab of three controllers")
	}
	for _, tc := range []struct {
		controllers int
		want        reports.Status
		reason      string
	}{
		{3, reports.StatusPassed, ""},
		{1, reports.StatusSkipped, "runs 1 controller; a leader failover needs 3 or 5"},
	} {
		t.Run(fmt.Sprintf("controllers=%d", tc.controllers), func(t *testing.T) {
			run, _ := childRun(t, haEnv, haControllersEnv+"="+strconv.Itoa(tc.controllers))
			ran := 0
			for _, s := range run.Specs {
				if s.ID != "ha/leader-failover" {
					continue
				}
				ran++
				if s.Status != tc.want || !strings.Contains(s.Reason, tc.reason) {
					t.Errorf("%s on %s: %s (%s); want %s %q\n%v", s.ID, s.Vendor, s.Status, s.Reason, tc.want, tc.reason, s.Evidence)
				}
				if tc.want == reports.StatusPassed {
					t.Logf("%s on %s took %s: %v", s.ID, s.Vendor, s.Duration.Round(time.Millisecond), s.Evidence)
					for k, v := range map[string]string{"lost": "0", "reused ids": "0", "duplicates": "0", "running job": "kept its allocation", "new leader acknowledges": "within 5s"} {
						if s.Observations[k] != v {
							t.Errorf("%s on %s: %s = %q, want %q", s.ID, s.Vendor, k, s.Observations[k], v)
						}
					}
				}
			}
			if ran != 2 {
				t.Errorf("%d results of ha/leader-failover, want one per vendor (2)", ran)
			}
		})
	}
}
