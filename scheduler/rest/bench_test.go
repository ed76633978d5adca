package rest_test

import (
	"context"
	"io"
	"net/http"
	"testing"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/auth"
	"github.com/parityhpc/parity/scheduler/client"
)

// BenchmarkGetJobs1000 measures GET /slurm/v0.0.44/jobs with 1,000
// pending jobs in the queue, over real HTTP to a real controller, as an
// admin (every job visible); the answer is checked once against the
// document before timing.
func BenchmarkGetJobs1000(b *testing.B) { benchGetJobs(b, 1000) }

// BenchmarkGetJobs10000 is the same with 10,000 jobs, to show how the
// cost grows toward the 100k-job target.
func BenchmarkGetJobs10000(b *testing.B) { benchGetJobs(b, 10000) }

func benchGetJobs(b *testing.B, jobs int) {
	c := startCluster(b)
	root := c.token(b, "root", auth.RoleAdmin)
	cl, err := client.Dial(context.Background(), c.ctrl.Addr(), c.token(b, "alice", auth.RoleUser))
	if err != nil {
		b.Fatal(err)
	}
	defer cl.Close()
	for i := range jobs {
		spec := &pb.JobSpec{Name: "bench", Partition: "gpu", Script: "#!/bin/sh\ntrue\n", Ntasks: int32(1 + i%4), TimeLimitSeconds: 600}
		if _, err := cl.Submit(context.Background(), spec); err != nil {
			b.Fatal(err)
		}
	}
	a := c.do(b, "GET", "/slurm/v0.0.44/jobs/", root, nil)
	if n := len(a.obj["jobs"].([]any)); n != jobs {
		b.Fatalf("%d jobs listed, want %d", n, jobs)
	}
	b.SetBytes(int64(len(a.body)))
	req, err := http.NewRequest("GET", c.base+"/slurm/v0.0.44/jobs/", nil)
	if err != nil {
		b.Fatal(err)
	}
	req.Header.Set("X-SLURM-USER-TOKEN", root)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		resp, err := c.http.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := io.Copy(io.Discard, resp.Body); err != nil || resp.StatusCode != http.StatusOK {
			b.Fatalf("%d %v", resp.StatusCode, err)
		}
		resp.Body.Close()
	}
}
