package format

import (
	"testing"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
)

func TestArrayColumns(t *testing.T) {
	tests := []struct {
		name       string
		job        *pb.Job
		wantID     string
		wantTaskID string
	}{
		{"plain job", &pb.Job{Id: 12}, "12", "N/A"},
		{"task", &pb.Job{Id: 130, ArrayJobId: 123, ArrayTask: true, ArrayTaskId: 7, ArrayName: "123_7"}, "123_7", "7"},
		{"remainder", &pb.Job{Id: 123, ArrayJobId: 123, ArrayName: "123_[8-9999%50]"}, "123_[8-9999%50]", "8-9999%50"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ArrayJobName(tt.job); got != tt.wantID {
				t.Errorf("ArrayJobName = %q, want %q", got, tt.wantID)
			}
			if got := ArrayTaskID(tt.job); got != tt.wantTaskID {
				t.Errorf("ArrayTaskID = %q, want %q", got, tt.wantTaskID)
			}
		})
	}
}
