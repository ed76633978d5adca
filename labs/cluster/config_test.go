package cluster

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/parityhpc/parity/labs/labfile"
	"github.com/parityhpc/parity/scheduler/config"
)

// TestControllerYAMLPreemption checks that only a lab started with
// Options.Preemption defines QOS (and so validates --qos), and that its
// preempting QOS may preempt the default one, cancelling at once.
func TestControllerYAMLPreemption(t *testing.T) {
	lab, err := labfile.Builtin("default")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		preempt bool
		want    []string // QOS names
		typ     string
	}{
		{name: "off", preempt: false, want: []string{config.DefaultQOS}, typ: ""},
		{name: "on", preempt: true, want: []string{config.DefaultQOS, PreemptQOS}, typ: "qos"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			text := controllerYAML(lab, dir, []string{"root"}, []string{"root"}, configChoices{preempt: tt.preempt})
			cfg, err := config.Parse(filepath.Join(dir, "cluster.yaml"), []byte(text))
			if err != nil {
				t.Fatalf("parse the lab's config: %v\n%s", err, text)
			}
			var names []string
			for _, q := range cfg.QOS {
				names = append(names, q.Name)
				if q.Name == PreemptQOS && !slices.Equal(q.Preempt, []string{config.DefaultQOS}) {
					t.Errorf("QOS %s preempts %v, want [%s]", q.Name, q.Preempt, config.DefaultQOS)
				}
			}
			if !slices.Equal(names, tt.want) {
				t.Errorf("QOS = %v, want %v", names, tt.want)
			}
			if cfg.Scheduler.PreemptType != tt.typ {
				t.Errorf("preemptType = %q, want %q", cfg.Scheduler.PreemptType, tt.typ)
			}
			if tt.preempt && cfg.Scheduler.PreemptMode != "cancel" {
				t.Errorf("preemptMode = %q, want cancel", cfg.Scheduler.PreemptMode)
			}
		})
	}
}

// A lab started with Options.NoAccounts is a cluster without accounting,
// as the compat anchor's Slurm: its configuration defines no account and
// still parses (the reclaimer exempts none).
func TestControllerYAMLNoAccounts(t *testing.T) {
	lab, err := labfile.Builtin("default")
	if err != nil {
		t.Fatal(err)
	}
	for _, noAccounts := range []bool{false, true} {
		dir := t.TempDir()
		text := controllerYAML(lab, dir, []string{"root"}, []string{"root"}, configChoices{noAccounts: noAccounts})
		cfg, err := config.Parse(filepath.Join(dir, "cluster.yaml"), []byte(text))
		if err != nil {
			t.Fatalf("noAccounts=%v: parse the lab's config: %v\n%s", noAccounts, err, text)
		}
		if got := len(cfg.Accounts) == 0; got != noAccounts {
			t.Errorf("noAccounts=%v: the config defines %d accounts", noAccounts, len(cfg.Accounts))
		}
	}
}

// TestControllerYAMLPriorityWeights: a lab's priority weights reach the
// controller's configuration (the compat lab's are all 0, as the anchor's
// slurm.conf sets no PriorityWeight*); a lab without them keeps the
// controller's defaults.
func TestControllerYAMLPriorityWeights(t *testing.T) {
	for _, tc := range []struct {
		name, priority string
		wantJobSize    float64
	}{
		{"all zero", "priority: {age: 0, fairshare: 0, jobSize: 0, partition: 0, qos: 0}\n", 0},
		{"one set", "priority: {jobSize: 7}\n", 7},
		{"none", "", 1000},
	} {
		lab, err := labfile.Parse("t.yaml", []byte("name: t\n"+tc.priority+"nodes:\n  - names: n1\n    template: cpu\n"))
		if err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		text := controllerYAML(lab, dir, []string{"root"}, []string{"root"}, configChoices{})
		cfg, err := config.Parse(filepath.Join(dir, "cluster.yaml"), []byte(text))
		if err != nil {
			t.Fatalf("%s: parse the lab's config: %v\n%s", tc.name, err, text)
		}
		if got := cfg.Priority.JobSize; got != tc.wantJobSize {
			t.Errorf("%s: job-size weight %v, want %v", tc.name, got, tc.wantJobSize)
		}
		if tc.name == "all zero" && cfg.Priority.Age+cfg.Priority.FairShare+cfg.Priority.Partition+cfg.Priority.QOS != 0 {
			t.Errorf("%s: weights %+v, want all 0", tc.name, cfg.Priority)
		}
	}
}
