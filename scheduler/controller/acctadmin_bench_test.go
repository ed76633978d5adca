package controller

import (
	"context"
	"fmt"
	"testing"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/auth"
	"github.com/parityhpc/parity/scheduler/client"
)

// BenchmarkAddTenThousandUsers is sacctmgr -i add user with 10,000 names
// in one batch, durable and in the decision log (target ≤ 2 s a batch);
// each batch goes into a fresh account of its own.
func BenchmarkAddTenThousandUsers(b *testing.B) {
	h := benchController(b)
	tok, err := auth.Sign(h.c.Key(), auth.Claims{User: "root", Role: auth.RoleAdmin, IssuedAt: h.clock.Now()})
	if err != nil {
		b.Fatal(err)
	}
	cl, err := client.Dial(context.Background(), h.c.Addr(), tok)
	if err != nil {
		b.Fatal(err)
	}
	defer cl.Close()
	ctx := context.Background()
	batches := make([][]string, b.N)
	for i := range batches {
		for n := range 10_000 {
			batches[i] = append(batches[i], fmt.Sprintf("u%d-%d", i, n))
		}
		if _, err := cl.ChangeAssoc(ctx, &pb.AssocChangeRequest{Action: "add", Entity: "account", Names: []string{fmt.Sprintf("big%d", i)}}); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for i := range b.N {
		got, err := cl.ChangeAssoc(ctx, &pb.AssocChangeRequest{Action: "add", Entity: "user", Names: batches[i], Set: []string{fmt.Sprintf("Account=big%d", i)}})
		if err != nil || len(got) != 10_000 {
			b.Fatalf("batch %d: %d added, %v", i, len(got), err)
		}
	}
}
