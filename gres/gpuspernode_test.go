package gres

import (
	"reflect"
	"strings"
	"testing"
)

// On the Slurm 22.05 anchor (8 h100 per node), sbatch with --gpus-per-node
// and --gres=gpu in either order ran the job with --gres's count
// (--gpus-per-node=3 --gres=gpu:1: CUDA_VISIBLE_DEVICES=0; =1 with gpu:3:
// 0,1,2), and refused a typed count beside an untyped one.
func TestGRESBesideGPUsPerNode(t *testing.T) {
	tests := []struct {
		gres, perNode string
		want          Requests
		err           string
	}{
		{"gpu:3", "1", Requests{{Name: "gpu", Count: 3}}, ""},
		{"gpu:1", "3", Requests{{Name: "gpu", Count: 1}}, ""},
		{"gpu", "2", Requests{{Name: "gpu", Count: 1}}, ""},
		{"gpu:h100:2", "h100:1", Requests{{Name: "gpu", Type: "h100", Count: 2}}, ""},
		{"nic:1", "2", Requests{{Name: "nic", Count: 1}, {Name: "gpu", Count: 2}}, ""},
		{"gpu:2", "h100:1", nil, "with and without type identification"},
		{"gpu:h100:2", "1", nil, "with and without type identification"},
	}
	for _, tc := range tests {
		t.Run(tc.gres+"+"+tc.perNode, func(t *testing.T) {
			jr, err := ParseFlags(Flags{GRES: tc.gres, GPUsPerNode: tc.perNode}, 0)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) || !strings.Contains(err.Error(), "--gpus-per-node") {
					t.Fatalf("err = %v, want one naming --gpus-per-node containing %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(jr.PerNode, tc.want) {
				t.Errorf("PerNode = %+v, want %+v", jr.PerNode, tc.want)
			}
		})
	}
}
