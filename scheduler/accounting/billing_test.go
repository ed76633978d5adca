package accounting

import (
	"errors"
	"math"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

func mustWeights(t testing.TB, s string) BillingWeights {
	t.Helper()
	w, err := ParseBillingWeights(s)
	if err != nil {
		t.Fatalf("ParseBillingWeights(%q): %v", s, err)
	}
	return w
}

func mustTRES(t testing.TB, s string) TRES {
	t.Helper()
	tr, err := ParseTRES(s)
	if err != nil {
		t.Fatalf("ParseTRES(%q): %v", s, err)
	}
	return tr
}

func TestParseBillingWeights(t *testing.T) {
	tests := []struct {
		in   string
		want BillingWeights
	}{
		{"CPU=1.0,Mem=0.25G,GRES/gpu=2.0", BillingWeights{"cpu": 1, "mem": 0.25 / 1024, "gres/gpu": 2}},
		{"GRES/gpu:h100=4,GRES/gpu:MI300X=4", BillingWeights{"gres/gpu:h100": 4, "gres/gpu:mi300x": 4}},
		{"Mem=1T", BillingWeights{"mem": 1.0 / (1 << 20)}},
		{"Mem=2M", BillingWeights{"mem": 2}},
		{"Mem=3", BillingWeights{"mem": 3}},
		{"CPU=1K", BillingWeights{"cpu": 1.0 / 1024}},
		{"", BillingWeights{}},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got := mustWeights(t, tc.in)
			if len(got) != len(tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
			for k, v := range tc.want {
				if math.Abs(got[k]-v) > 1e-15 {
					t.Fatalf("weight[%s] = %v, want %v", k, got[k], v)
				}
			}
		})
	}
}

func TestParseBillingWeightsErrors(t *testing.T) {
	for _, in := range []string{"CPU", "CPU=x", "Mem=1K", "CPU=-1", "billing=1", "CPU=1,cpu=2", "CPU=", "=1", "CPU=inf"} {
		_, err := ParseBillingWeights(in)
		if !errors.Is(err, ErrBadBilling) {
			t.Errorf("ParseBillingWeights(%q) err = %v, want ErrBadBilling", in, err)
			continue
		}
		first, _, _ := strings.Cut(in, ",")
		if !strings.Contains(err.Error(), first) && !strings.Contains(err.Error(), "given twice") {
			t.Errorf("error %q does not name element %q", err, first)
		}
	}
	if _, err := ParseBillingMode("MAX"); !errors.Is(err, ErrBadBilling) || !strings.Contains(err.Error(), `"MAX"`) {
		t.Errorf("ParseBillingMode(MAX) err = %v", err)
	}
}

// The examples of slurm.conf's TRESBillingWeights and PriorityFlags.
func TestBill(t *testing.T) {
	slurmDoc := "CPU=1.0,Mem=0.25G,GRES/gpu=2.0"
	tests := []struct {
		name    string
		weights string
		alloc   string
		mode    BillingMode
		want    int64
	}{
		{"sum: 1 CPU + 8G", slurmDoc, "cpu=1,mem=8G", BillSum, 3},
		{"MAX_TRES: 1 CPU + 8G", slurmDoc, "cpu=1,mem=8G", BillMaxTRES, 2},
		{"MAX_TRES_GRES: 1 CPU + 8G", slurmDoc, "cpu=1,mem=8G", BillMaxTRESGRES, 2},
		{"sum: 1 CPU + 8G + 1 GPU", slurmDoc, "cpu=1,mem=8G,gres/gpu=1", BillSum, 5},
		{"MAX_TRES: 1 CPU + 8G + 1 GPU", slurmDoc, "cpu=1,mem=8G,gres/gpu=1", BillMaxTRES, 2},
		{"MAX_TRES_GRES: 1 CPU + 8G + 1 GPU", slurmDoc, "cpu=1,mem=8G,gres/gpu=1", BillMaxTRESGRES, 4},
		{"MAX_TRES_GRES: 1 CPU + 1 GPU", slurmDoc, "cpu=1,gres/gpu=1", BillMaxTRESGRES, 3},
		{"truncates 4.5 to 4", "CPU=1.5", "cpu=3", BillSum, 4},
		{"truncates 0.9 to 0", "CPU=0.3", "cpu=3", BillSum, 0},
		{"float noise does not lose a unit (0.29×100)", "CPU=0.29", "cpu=100", BillSum, 29},
		{"MAX_TRES adds global TRES", "CPU=1,GRES/gpu=8,License/matlab=10", "cpu=4,gres/gpu=1,license/matlab=1", BillMaxTRES, 18},
		{"sum of the same", "CPU=1,GRES/gpu=8,License/matlab=10", "cpu=4,gres/gpu=1,license/matlab=1", BillSum, 22},
		{"no weights bills CPUs", "", "cpu=6,gres/gpu=8,mem=100G", BillSum, 6},
		{"no weights under MAX_TRES too", "", "cpu=6,gres/gpu=8", BillMaxTRES, 6},
		{"typed and untyped weights both apply", "GRES/gpu=2,GRES/gpu:h100=4", "gres/gpu=2,gres/gpu:h100=2", BillSum, 12},
		{"unweighted TRES are free", "GRES/gpu=10", "cpu=64,mem=512G,gres/gpu=1", BillSum, 10},
		{"node weight is a node TRES", "Node=100,CPU=1", "node=2,cpu=64", BillMaxTRES, 200},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := mustWeights(t, tc.weights)
			if got := w.Bill(mustTRES(t, tc.alloc), tc.mode); got != tc.want {
				t.Fatalf("Bill(%s, %s) = %d, want %d", tc.alloc, tc.mode, got, tc.want)
			}
		})
	}
}

// The same job on an NVIDIA and an AMD node of equal weights bills the
// same, in every mode: vendors are names, and names with equal weights are
// interchangeable.
func TestBillVendorNeutral(t *testing.T) {
	w := mustWeights(t, "CPU=1,Mem=0.25G,GRES/gpu=1,GRES/gpu:h100=4,GRES/gpu:mi300x=4")
	nvidia := mustTRES(t, "cpu=8,mem=64G,gres/gpu=2,gres/gpu:h100=2,node=1")
	amd := mustTRES(t, "cpu=8,mem=64G,gres/gpu=2,gres/gpu:mi300x=2,node=1")
	if got := w.Bill(nvidia, BillSum); got != 8+16+2+8 {
		t.Fatalf("NVIDIA sum billing = %d, want 34", got)
	}
	for _, mode := range []BillingMode{BillSum, BillMaxTRES, BillMaxTRESGRES} {
		if a, b := w.Bill(nvidia, mode), w.Bill(amd, mode); a != b {
			t.Errorf("%s: h100 job bills %d, mi300x job bills %d", mode, a, b)
		}
	}
	rapid.Check(t, func(t *rapid.T) {
		gpuWeight := rapid.Float64Range(0, 100).Draw(t, "weight")
		w := BillingWeights{"cpu": rapid.Float64Range(0, 4).Draw(t, "cpuWeight"), "gres/gpu:h100": gpuWeight, "gres/gpu:mi300x": gpuWeight}
		cpus := float64(rapid.IntRange(0, 256).Draw(t, "cpus"))
		gpus := float64(rapid.IntRange(0, 8).Draw(t, "gpus"))
		mode := BillingMode(rapid.IntRange(0, 2).Draw(t, "mode"))
		a := w.Bill(TRES{"cpu": cpus, "gres/gpu": gpus, "gres/gpu:h100": gpus}, mode)
		b := w.Bill(TRES{"cpu": cpus, "gres/gpu": gpus, "gres/gpu:mi300x": gpus}, mode)
		if a != b {
			t.Fatalf("h100 %d != mi300x %d", a, b)
		}
	})
}

func TestBillingPolicyPerPartition(t *testing.T) {
	p := BillingPolicy{
		Partitions: map[string]BillingWeights{"gpu": mustWeights(t, "CPU=1,GRES/gpu=10")},
		Mode:       BillSum,
	}
	alloc := mustTRES(t, "cpu=4,gres/gpu=2")
	if got := p.Bill("gpu", alloc); got != 24 {
		t.Errorf("gpu partition bills %d, want 24", got)
	}
	if got := p.Bill("cpu", alloc); got != 4 {
		t.Errorf("partition without weights bills %d, want the CPU count 4", got)
	}
	with := p.WithBilling("gpu", alloc)
	if with[TRESBilling] != 24 || alloc[TRESBilling] != 0 {
		t.Errorf("WithBilling = %v (input now %v), want billing=24 on a copy", with, alloc)
	}
}
