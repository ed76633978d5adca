package policy

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/parityhpc/parity/scheduler/jobspec"
)

func TestParseLimitSet(t *testing.T) {
	got, err := ParseLimitSet("GrpTRES=gres/gpu=8,cpu=64 MaxTRESPU=gres/gpu:h100=2 maxjobs=4 MaxSubmit=10 GrpSubmitJobs=100 MaxJobsPA=3 MaxWall=1-02:00:00 MaxTRES=node=2 MaxTRESPerNode=gres/gpu=4", jobspec.ParseDuration)
	if err != nil {
		t.Fatal(err)
	}
	want := LimitSet{GrpTRES: TRES{"gres/gpu": 8, "cpu": 64}, MaxTRESPerUser: TRES{"gres/gpu:h100": 2}, MaxJobs: 4, MaxSubmitJobs: 10,
		GrpSubmitJobs: 100, MaxJobsPerAccount: 3, MaxWall: 26 * time.Hour, MaxTRESPerJob: TRES{"node": 2}, MaxTRESPerNode: TRES{"gres/gpu": 4}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
}

func TestSetLimitClears(t *testing.T) {
	shared := TRES{"gres/gpu": 8, "cpu": 64}
	set := LimitSet{GrpTRES: shared, MaxJobs: 4, MaxWall: time.Hour}
	for _, kv := range [][2]string{{"GrpTRES", "gres/gpu=-1,mem=1G"}, {"MaxJobs", "-1"}, {"MaxWall", "UNLIMITED"}} {
		if err := SetLimit(&set, kv[0], kv[1], jobspec.ParseDuration); err != nil {
			t.Fatal(err)
		}
	}
	if !reflect.DeepEqual(set.GrpTRES, TRES{"cpu": 64, "mem": 1024}) || set.MaxJobs != 0 || set.MaxWall != 0 {
		t.Fatalf("after clearing: %+v", set)
	}
	if len(shared) != 2 {
		t.Fatalf("SetLimit modified a map it did not own: %v", shared)
	}
}

func TestSetLimitErrors(t *testing.T) {
	for _, tc := range []struct{ field, value, mention string }{
		{"GrpTRES", "gpu=4", `GrpTRES=gpu=4: policy: invalid TRES "gpu=4": unknown TRES "gpu"`},
		{"MaxJobs", "many", `MaxJobs="many" is not a count`},
		{"MaxJobs", "-2", `MaxJobs="-2" is not a count`},
		{"MaxWall", "1:2:3:4", `MaxWall="1:2:3:4"`},
		{"MaxBananas", "3", `unknown limit "MaxBananas"`},
	} {
		var set LimitSet
		err := SetLimit(&set, tc.field, tc.value, jobspec.ParseDuration)
		if !errors.Is(err, ErrLimits) || !strings.Contains(err.Error(), tc.mention) {
			t.Errorf("%s=%s: %v, want an error naming %q", tc.field, tc.value, err, tc.mention)
		}
	}
	if err := SetLimit(&LimitSet{}, "MaxWall", "10", nil); !errors.Is(err, ErrLimits) {
		t.Errorf("MaxWall without a parser: %v", err)
	}
	if _, err := ParseLimitSet("MaxJobs", nil); !errors.Is(err, ErrLimits) || !strings.Contains(err.Error(), "is not Field=value") {
		t.Errorf("bare word: %v", err)
	}
}
