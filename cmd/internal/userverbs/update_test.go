package userverbs

import (
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
)

func TestParseUpdate(t *testing.T) {
	cases := []struct {
		words []string
		ids   []string
		job   *pb.UpdateJobRequest
		delta time.Duration
		node  *pb.UpdateNodeRequest
		err   string
	}{
		{words: []string{"JobId=12", "TimeLimit=2:00:00"}, ids: []string{"12"}, job: &pb.UpdateJobRequest{TimeLimitSeconds: proto.Int64(7200)}},
		{words: []string{"jobid=12,13", "timelimit=1-00:00:00", "Nice=10", "Partition=debug", "QOS=high", "JobName=x", "Account=bio", "Comment=a b"},
			ids: []string{"12", "13"}, job: &pb.UpdateJobRequest{TimeLimitSeconds: proto.Int64(86400), Nice: proto.Int32(10), Partition: proto.String("debug"),
				Qos: proto.String("high"), Name: proto.String("x"), Account: proto.String("bio"), Comment: proto.String("a b")}},
		{words: []string{"JobId=5", "TimeLimit=+30"}, ids: []string{"5"}, job: &pb.UpdateJobRequest{}, delta: 30 * time.Minute},
		{words: []string{"JobId=5", "TimeLimit=-1:00:00"}, ids: []string{"5"}, job: &pb.UpdateJobRequest{}, delta: -time.Hour},
		{words: []string{"JobId=5", "TimeLimit=UNLIMITED"}, ids: []string{"5"}, job: &pb.UpdateJobRequest{TimeLimitSeconds: proto.Int64(-1)}},
		{words: []string{"JobId=5", "Comment=needs", "more", "words"}, ids: []string{"5"}, job: &pb.UpdateJobRequest{Comment: proto.String("needs more words")}},
		{words: []string{"NodeName=n[1-2]", "State=drain", "Reason=bad", "fan"}, node: &pb.UpdateNodeRequest{Nodes: "n[1-2]", State: "DRAIN", Reason: "bad fan"}},
		{words: []string{"NodeName=n1", "State=RESUME"}, node: &pb.UpdateNodeRequest{Nodes: "n1", State: "RESUME"}},
		{words: []string{"NodeName=n1", "State=IDLE"}, node: &pb.UpdateNodeRequest{Nodes: "n1", State: "RESUME"}},
		{words: []string{"NodeName=n1", "State=DRAIN", "Reason=xid 79", "Devices=0,3"}, node: &pb.UpdateNodeRequest{Nodes: "n1", State: "DRAIN", Reason: "xid 79", Devices: []string{"0", "3"}}},
		{words: []string{"node=n1", "gpu=2", "partitions=3g.40gb+2g.20gb+1g.10gb"},
			node: &pb.UpdateNodeRequest{Nodes: "n1", State: "PARTITION", Devices: []string{"2"}, Partitions: []string{"3g.40gb", "2g.20gb", "1g.10gb"}}},
		{words: []string{"NodeName=n1", "Gpu=0", "Partitions=7x1g.10gb"},
			node: &pb.UpdateNodeRequest{Nodes: "n1", State: "PARTITION", Devices: []string{"0"}, Partitions: []string{"1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb"}}},
		{words: []string{"NodeName=n1", "Gpu=0", "Partitions=CPX"}, node: &pb.UpdateNodeRequest{Nodes: "n1", State: "PARTITION", Devices: []string{"0"}, Partitions: []string{"cpx"}}},
		{words: []string{"NodeName=n1", "Gpu=0", "Partitions=none"}, node: &pb.UpdateNodeRequest{Nodes: "n1", State: "PARTITION", Devices: []string{"0"}}},
		{words: []string{"NodeName=n1", "Gpu=0", "Partitions=cpx", "Force=yes"}, node: &pb.UpdateNodeRequest{Nodes: "n1", State: "PARTITION", Devices: []string{"0"}, Partitions: []string{"cpx"}, Force: true}},
		{words: []string{"NodeName=n1", "Gpu=0", "Partitions=cpx", "Force=maybe"}, err: "force=maybe: want yes or no"},
		{words: []string{"NodeName=n1", "State=DRAIN", "Reason=x", "Force=yes"}, err: "Force= goes with Partitions="},
		{words: []string{"NodeName=n1", "Partitions=1g.10gb"}, err: "name exactly one GPU"},
		{words: []string{"NodeName=n1", "Gpu=0,1", "Partitions=1g.10gb"}, err: "name exactly one GPU"},
		{words: []string{"NodeName=n1", "Gpu=0", "Partitions=0x1g.10gb"}, err: "partitions=0x1g.10gb"},
		{words: []string{"NodeName=n1", "Gpu=0", "Partitions=+"}, err: "no partition types"},
		{words: []string{"NodeName=n1", "State=DRAIN", "Reason=x", "Gpu=0", "Partitions=1g.10gb"}, err: "cannot be combined with State=DRAIN"},
		{words: []string{"NodeName=n1", "State=DOWN"}, err: "you must specify a reason"},
		{words: []string{"NodeName=n1"}, err: "State= is required"},
		{words: []string{"NodeName=n1", "State=SLEEP"}, err: "State=SLEEP: invalid node state"},
		{words: []string{"NodeName=n1", "State=DRAIN", "Reason=x", "Nice=5"}, err: "job fields cannot be set"},
		{words: []string{"JobId=1", "State=DRAIN"}, err: "apply to nodes"},
		{words: []string{"JobId=1", "NodeName=n1"}, err: "cannot be updated together"},
		{words: []string{"JobId=1"}, err: "nothing to change"},
		{words: []string{"JobId=abc", "Nice=1"}, err: `jobid=abc: invalid job id "abc"`},
		{words: []string{"JobId=20_3", "Nice=1"}, ids: []string{"20_3"}, job: &pb.UpdateJobRequest{Nice: proto.Int32(1)}},
		{words: []string{"JobId=20_[1-2],7", "Nice=1"}, ids: []string{"20_1", "20_2", "7"}, job: &pb.UpdateJobRequest{Nice: proto.Int32(1)}},
		{words: []string{"JobId=20_[1-", "Nice=1"}, err: `jobid=20_[1-: workflow: invalid job id "20_[1-"`},
		{words: []string{"JobId=1", "TimeLimit=2:xx"}, err: "timelimit=2:xx"},
		{words: []string{"JobId=1", "Nice=high"}, err: "nice=high"},
		{words: []string{"JobId=1", "NumNodes=2"}, err: "update of numnodes is not supported"},
		{words: []string{"JobId=1", "Colour=red"}, err: `unknown parameter "colour"`},
		{words: []string{"TimeLimit=5"}, err: "no JobId= or NodeName="},
		{words: []string{"stray"}, err: `invalid input "stray"`},
	}
	for _, c := range cases {
		p, err := parseUpdate(c.words)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("parseUpdate(%q) error = %v, want %q", c.words, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("parseUpdate(%q): %v", c.words, err)
			continue
		}
		var got []string
		for _, id := range p.jobIDs {
			got = append(got, id.String())
		}
		if !slices.Equal(got, c.ids) || p.timeDelta != c.delta || !proto.Equal(p.job, c.job) || !proto.Equal(p.node, c.node) {
			t.Errorf("parseUpdate(%q) = ids %v job %v delta %v node %v", c.words, p.jobIDs, p.job, p.timeDelta, p.node)
		}
	}
}

func TestJobIDList(t *testing.T) {
	ids, err := jobIDList([]string{"12,13", "7", ""})
	if err != nil || !slices.Equal(ids, []uint64{12, 13, 7}) {
		t.Errorf("jobIDList = %v, %v", ids, err)
	}
	for _, bad := range []string{"0", "-1", "1x", "20_[1-3]", "18446744073709551616"} {
		if _, err := jobIDList([]string{bad}); err == nil {
			t.Errorf("jobIDList(%q) accepted", bad)
		}
	}
}
