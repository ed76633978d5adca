package format

import (
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
)

func TestShowReservations(t *testing.T) {
	start := time.Date(2025, 6, 2, 10, 0, 0, 0, time.UTC)
	rs := []*pb.Reservation{
		{Name: "maint", StartTime: timestamppb.New(start), EndTime: timestamppb.New(start.Add(2 * time.Hour)), Nodes: []string{"n1", "n2"},
			Users: []string{"root"}, Flags: []string{"MAINT", "IGNORE_JOBS"}, State: "INACTIVE"},
		{Name: "gpus", StartTime: timestamppb.New(start), Accounts: []string{"physics"}, Tres: "gres/gpu=3", Partition: "gpu", State: "ACTIVE",
			Slices: []*pb.ReservationSlice{{Node: "n1", Devices: []string{"a", "b"}, Cpus: 4, MemoryMb: 1024}, {Node: "n3", Devices: []string{"c"}, Cpus: 2}}},
	}
	var b strings.Builder
	if err := ShowReservations(&b, rs, ShowOptions{}); err != nil {
		t.Fatal(err)
	}
	want := `ReservationName=maint StartTime=2025-06-02T10:00:00 EndTime=2025-06-02T12:00:00 Duration=02:00:00
   Nodes=n[1-2] NodeCnt=2 PartitionName=(null) Flags=MAINT,IGNORE_JOBS
   TRES=node=2
   Users=root Accounts=(null) State=INACTIVE

ReservationName=gpus StartTime=2025-06-02T10:00:00 EndTime=Unknown Duration=UNLIMITED
   Nodes=n[1,3] NodeCnt=2 PartitionName=gpu Flags=(null)
   TRES=cpu=6,mem=1024M,gres/gpu=3
   Users=(null) Accounts=physics State=ACTIVE

`
	if b.String() != want {
		t.Fatalf("got\n%s\nwant\n%s", b.String(), want)
	}
	b.Reset()
	if err := ReservationTable(&b, rs, Env{}, true); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(b.String(), "\n"), "\n")
	if len(lines) != 3 || strings.Join(strings.Fields(lines[0]), " ") != "RESV_NAME STATE START_TIME END_TIME DURATION NODELIST" ||
		strings.Join(strings.Fields(lines[2]), " ") != "gpus ACTIVE 2025-06-02T10:00:00 Unknown UNLIMITED n[1,3]" {
		t.Fatalf("sinfo -T:\n%s", b.String())
	}
}
