package agent

import (
	"maps"
	"testing"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
)

func TestRankEnv(t *testing.T) {
	// The second node of a two-node step of five tasks (3 + 2).
	so := &pb.StepOrder{JobId: 123456, StepNodes: []string{"n1", "n2"}, NodeIndex: 1, FirstTask: 3, Tasks: 2, TotalTasks: 5}
	tests := []struct {
		name   string
		local  uint32
		caller map[string]string
		want   map[string]string
	}{
		{name: "first task here", local: 0, want: map[string]string{"RANK": "3", "WORLD_SIZE": "5", "LOCAL_RANK": "0",
			"LOCAL_WORLD_SIZE": "2", "GROUP_RANK": "1", "MASTER_ADDR": "n1", "MASTER_PORT": "13456"}},
		{name: "second task here", local: 1, want: map[string]string{"RANK": "4", "WORLD_SIZE": "5", "LOCAL_RANK": "1",
			"LOCAL_WORLD_SIZE": "2", "GROUP_RANK": "1", "MASTER_ADDR": "n1", "MASTER_PORT": "13456"}},
		{name: "the caller's rendezvous is kept", local: 1, caller: map[string]string{"MASTER_ADDR": "head", "MASTER_PORT": "29500", "RANK": "9"},
			want: map[string]string{"RANK": "4", "WORLD_SIZE": "5", "LOCAL_RANK": "1", "LOCAL_WORLD_SIZE": "2", "GROUP_RANK": "1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := rankEnv(so, tt.local, tt.caller); !maps.Equal(got, tt.want) {
				t.Errorf("rankEnv = %v, want %v", got, tt.want)
			}
		})
	}
}
