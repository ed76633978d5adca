package controller

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/auth"
	"github.com/parityhpc/parity/scheduler/client"
)

// Every listing reaches a client whose message bound its whole answer
// exceeds: the controller streams it in messages under its chunk bound
// and the client concatenates them. (The bounds are scaled down here; at
// the defaults the same holds for 4 MiB and squeue with 100k jobs.)
func TestListingsLargerThanAMessage(t *testing.T) {
	h := startTuned(t, Options{Limits: TransportLimits{ListChunkBytes: 1}}) // one item per message
	ctx := context.Background()
	alice := h.as("alice", auth.RoleUser)
	const jobs = 40
	var wg sync.WaitGroup
	for i := range jobs {
		wg.Go(func() {
			if _, err := alice.Submit(ctx, gpuJob(fmt.Sprintf("job%d", i), 1)); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	h.register("n1", 4)
	h.pass()
	tok := h.token("root", auth.RoleAdmin, "")
	root := h.dial(tok)
	for _, tc := range []struct {
		name string
		list func(*client.Client) ([]proto.Message, error)
		min  int
		// lead: the first message carries the first two items (sprio's
		// weights and first job).
		lead bool
	}{
		{"jobs", func(cl *client.Client) ([]proto.Message, error) {
			return asMessages(cl.ListJobs(ctx, &pb.ListJobsRequest{AllStates: true}))
		}, jobs, false},
		{"nodes", func(cl *client.Client) ([]proto.Message, error) { return asMessages(cl.ListNodes(ctx, nil)) }, 3, false},
		{"events", func(cl *client.Client) ([]proto.Message, error) { return asMessages(cl.Events(ctx, nil)) }, 2, false},
		{"priorities", func(cl *client.Client) ([]proto.Message, error) {
			r, err := cl.Priority(ctx, nil)
			if err != nil || r.GetWeights() == nil {
				return nil, fmt.Errorf("weights %v: %w", r.GetWeights(), err)
			}
			// The first message carries the weights with the first job.
			all, err := asMessages(r.GetJobs(), err)
			return append([]proto.Message{r.GetWeights()}, all...), err
		}, jobs - 4, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			all, err := tc.list(root)
			if err != nil {
				t.Fatal(err)
			}
			total, largest := 0, 0
			for i, m := range all {
				n := proto.Size(m)
				if tc.lead && i == 1 {
					n += proto.Size(all[0])
				}
				total, largest = total+n, max(largest, n)
			}
			if len(all) < tc.min {
				t.Fatalf("%d items, want at least %d", len(all), tc.min)
			}
			// A client that takes one item's message, not the whole answer.
			bound := largest + 8 // the item's tag and length
			if bound >= total {
				t.Fatalf("test needs an answer (%d bytes) larger than the bound (%d)", total, bound)
			}
			small, err := client.Dial(ctx, h.c.Addr(), tok, grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(bound)))
			if err != nil {
				t.Fatal(err)
			}
			defer small.Close()
			got, err := tc.list(small)
			if err != nil {
				t.Fatalf("client bounded at %d bytes, answer of %d: %v", bound, total, err)
			}
			if len(got) != len(all) {
				t.Fatalf("%d items through the bounded client, %d through the other", len(got), len(all))
			}
			for i := range got {
				if !proto.Equal(got[i], all[i]) {
					t.Fatalf("item %d differs:\n%v\n%v", i, got[i], all[i])
				}
			}
		})
	}
}

func asMessages[T proto.Message](items []T, err error) ([]proto.Message, error) {
	out := make([]proto.Message, len(items))
	for i, it := range items {
		out[i] = it
	}
	return out, err
}

func TestSendChunks(t *testing.T) {
	job := func(name string) *pb.Job { return &pb.Job{Spec: &pb.JobSpec{Name: name}} }
	a, b, big := job("a"), job("b"), job(string(make([]byte, 100)))
	one := 1 + 1 + proto.Size(a) // tag, length, the job
	tests := []struct {
		name  string
		items []*pb.Job
		limit int
		want  [][]*pb.Job
	}{
		{"empty: one empty message", nil, 1 << 20, [][]*pb.Job{{}}},
		{"all fit", []*pb.Job{a, b}, 2 * one, [][]*pb.Job{{a, b}}},
		{"split at the limit", []*pb.Job{a, b, a}, 2*one + 1, [][]*pb.Job{{a, b}, {a}}},
		{"an item over the limit goes alone", []*pb.Job{a, big, b}, one, [][]*pb.Job{{a}, {big}, {b}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got [][]*pb.Job
			err := sendChunks(tc.items, tc.limit, func(part []*pb.Job) error {
				got = append(got, part)
				if n := proto.Size(&pb.ListJobsResponse{Jobs: part}); len(part) > 1 && n > tc.limit {
					t.Errorf("message of %d bytes over the %d limit", n, tc.limit)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("%d messages, want %d", len(got), len(tc.want))
			}
			for i := range got {
				if len(got[i]) != len(tc.want[i]) {
					t.Fatalf("message %d holds %d, want %d", i, len(got[i]), len(tc.want[i]))
				}
				for k := range got[i] {
					if got[i][k] != tc.want[i][k] {
						t.Fatalf("message %d item %d differs", i, k)
					}
				}
			}
		})
	}
}
