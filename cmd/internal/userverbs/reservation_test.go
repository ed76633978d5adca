package userverbs

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/parityhpc/parity/scheduler/api"
	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"google.golang.org/protobuf/proto"
)

func TestParseResvWords(t *testing.T) {
	at := func(d time.Duration) time.Time { return testNow.Add(d) }
	tests := []struct {
		name    string
		words   string
		want    *pb.ReservationSpec
		fields  []string
		wantErr []string // fragments of the error
	}{
		{name: "the issue's example", words: "ReservationName=maint StartTime=now+1hour Duration=2:00:00 Nodes=gpu[1-2] Users=alice Accounts=a Flags=MAINT,IGNORE_JOBS PartitionName=gpu",
			want: &pb.ReservationSpec{Name: "maint", StartTime: api.Timestamp(at(time.Hour)), DurationSeconds: 7200, Nodes: "gpu[1-2]",
				Users: []string{"alice"}, Accounts: []string{"a"}, Flags: []string{"MAINT", "IGNORE_JOBS"}, Partition: "gpu"},
			fields: []string{"start_time", "duration", "nodes", "users", "accounts", "flags", "partition"}},
		{name: "keys in any case, TRES and an end time", words: "reservationname=r starttime=2025-06-03T08:00 endtime=2025-06-03T18:00 tres=gres/gpu:h100=4 accounts=physics,bio",
			want: &pb.ReservationSpec{Name: "r", StartTime: api.Timestamp(time.Date(2025, 6, 3, 8, 0, 0, 0, time.UTC)),
				EndTime: api.Timestamp(time.Date(2025, 6, 3, 18, 0, 0, 0, time.UTC)), Tres: "gres/gpu:h100=4", Accounts: []string{"physics", "bio"}},
			fields: []string{"start_time", "end_time", "tres", "accounts"}},
		{name: "NodeCnt is TRES node=", words: "StartTime=now NodeCnt=2 Duration=UNLIMITED Users=root",
			want:   &pb.ReservationSpec{StartTime: api.Timestamp(testNow), Tres: "node=2", DurationSeconds: -1, Users: []string{"root"}},
			fields: []string{"start_time", "tres", "duration", "users"}},
		{name: "an update names only what changes", words: "ReservationName=maint Duration=1-00:00:00",
			want: &pb.ReservationSpec{Name: "maint", DurationSeconds: 86400}, fields: []string{"duration"}},
		{name: "unknown key", words: "ReservationName=x Colour=red", wantErr: []string{"Colour=red", "unknown reservation key"}},
		{name: "bad start", words: "StartTime=yesterdayish", wantErr: []string{"StartTime=yesterdayish"}},
		{name: "bad end", words: "EndTime=25:99", wantErr: []string{"EndTime=25:99"}},
		{name: "bad duration", words: "Duration=2h", wantErr: []string{"Duration=2h"}},
		{name: "zero duration", words: "Duration=0", wantErr: []string{"Duration=0", "positive"}},
		{name: "bad node count", words: "NodeCnt=-1", wantErr: []string{"NodeCnt=-1"}},
		{name: "not key=value", words: "maint", wantErr: []string{`"maint"`, "Key=Value"}},
		{name: "list edits", words: "Users+=bob", wantErr: []string{"Users+=bob", "not supported"}},
		{name: "denials", words: "Users=-bob", wantErr: []string{`"-bob"`, "not supported"}},
		{name: "unsupported key", words: "CoreCnt=4", wantErr: []string{"CoreCnt=4", "not supported"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec, fields, err := parseResvWords(strings.Fields(tt.words), testNow, time.UTC)
			if tt.wantErr != nil {
				if err == nil {
					t.Fatalf("parsed %v; want an error", spec)
				}
				for _, f := range tt.wantErr {
					if !strings.Contains(err.Error(), f) {
						t.Fatalf("error %q lacks %q", err, f)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !proto.Equal(spec, tt.want) || !slices.Equal(fields, tt.fields) {
				t.Fatalf("got %v %v\nwant %v %v", spec, fields, tt.want, tt.fields)
			}
		})
	}
}

func TestReservationCommands(t *testing.T) {
	cl := startCLICluster(t)
	cl.register("n1", 4)
	cl.register("n2", 4)
	alice, olga := cl.as("alice", nil), cl.as("olga", nil)
	create := []string{"scontrol", "create", "reservation", "ReservationName=maint", "StartTime=now+1hour", "Duration=2:00:00",
		"Nodes=n[1-2]", "Users=alice", "Flags=MAINT"}
	cl.fails(alice, 1, create, "scontrol: error: access/permission denied")
	if out := cl.ok(olga, create...); out != "Reservation created: maint\n" {
		t.Fatalf("create: %q", out)
	}
	cl.fails(olga, 1, []string{"scontrol", "create", "res", "ReservationName=x", "StartTime=now", "Duration=10", "Nodes=n9", "Users=bob"}, `Nodes=n9: unknown node "n9"`)
	cl.fails(olga, 1, []string{"parity", "reservation", "create", "ReservationName=x", "StartTime=soon"}, "StartTime=soon")
	cl.fails(olga, 1, []string{"scontrol", "create", "reservation", "Name=x"}, "Name=x: unknown reservation key")

	rec := record(cl.ok(alice, "scontrol", "show", "reservation", "maint"))
	for k, want := range map[string]string{"ReservationName": "maint", "StartTime": "2025-06-02T10:00:00", "EndTime": "2025-06-02T12:00:00",
		"Duration": "02:00:00", "Nodes": "n[1-2]", "NodeCnt": "2", "Flags": "MAINT", "Users": "alice", "TRES": "node=2"} {
		if rec[k] != want {
			t.Errorf("show reservation: %s=%q, want %q", k, rec[k], want)
		}
	}
	if r := rows(cl.ok(alice, "sinfo", "-T")); len(r) != 1 || !strings.HasPrefix(r[0], "maint ") || !strings.HasSuffix(r[0], "2025-06-02T10:00:00 2025-06-02T12:00:00 02:00:00 n[1-2]") {
		t.Errorf("sinfo -T: %q", r)
	}

	// Jobs name it with --reservation; a non-member is refused.
	cl.ok(alice, "sbatch", "--reservation=maint", "--wrap", "true")
	cl.fails(cl.as("bob", nil), 1, []string{"sbatch", "--reservation=maint", "--wrap", "true"}, "reservation=maint")
	if out := cl.ok(alice, "squeue", "-h", "-o", "%v"); strings.TrimSpace(out) != "maint" {
		t.Errorf("squeue %%v: %q", out)
	}

	if out := cl.ok(olga, "scontrol", "update", "ReservationName=maint", "Duration=3:00:00", "Users=alice,bob"); out != "Reservation updated.\n" {
		t.Fatalf("update: %q", out)
	}
	var js struct {
		Reservations []struct {
			Name  string   `json:"name"`
			Users []string `json:"users"`
			End   string   `json:"endTime"`
		} `json:"reservations"`
	}
	if err := json.Unmarshal([]byte(cl.ok(alice, "parity", "reservation", "list", "--json")), &js); err != nil || len(js.Reservations) != 1 {
		t.Fatalf("list --json: %v %+v", err, js)
	}
	if got := js.Reservations[0]; got.Name != "maint" || !slices.Equal(got.Users, []string{"alice", "bob"}) || !strings.HasPrefix(got.End, "2025-06-02T13:00:00") {
		t.Errorf("after update: %+v", got)
	}
	cl.fails(olga, 1, []string{"scontrol", "update", "ReservationName=maint", "Flags=DAILY"}, "DAILY")

	cl.fails(alice, 1, []string{"scontrol", "delete", "ReservationName=maint"}, "permission denied")
	cl.ok(olga, "scontrol", "delete", "ReservationName=maint")
	cl.fails(olga, 1, []string{"parity", "reservation", "delete", "maint"}, "ReservationName=maint: reservation not found")
	if out := cl.ok(alice, "scontrol", "show", "res"); out != "No reservations in the system\n" {
		t.Errorf("show with none: %q", out)
	}
}
