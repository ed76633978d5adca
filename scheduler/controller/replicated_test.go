package controller

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/parityhpc/parity/scheduler/api"
	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/auth"
	"github.com/parityhpc/parity/scheduler/client"
	"github.com/parityhpc/parity/scheduler/config"
)

func TestAFollowerNamesTheLeader(t *testing.T) {
	tr := startTrioTimed(t, "", steadyTiming)
	lead := tr.leader()
	for _, a := range tr.addrs {
		if a == lead {
			continue
		}
		// A follower names the leader once it has heard from it: on a
		// loaded machine the first heartbeat can come after the leader
		// already serves.
		eventually(t, func() bool { return tr.cs[a].leader() == lead }, "follower "+a+" never heard from the leader "+lead)
		cl := tr.client(a, "alice", auth.RoleUser)
		// The leader serves once it applied the log; a follower names it
		// once its first heartbeat came (on a loaded machine, later).
		eventually(t, func() bool { return tr.cs[a].leader() == lead }, "follower "+a+" never heard of the leader "+lead)
		var trailer metadata.MD
		_, err := pb.NewJobsClient(cl.Conn()).Submit(context.Background(), &pb.SubmitRequest{Spec: gpuJob("x", 1)}, grpc.Trailer(&trailer))
		if status.Code(err) != codes.Unavailable || !strings.Contains(status.Convert(err).Message(), "the leader is "+lead) {
			t.Fatalf("follower %s: %v, want Unavailable naming %s", a, err, lead)
		}
		if got := trailer.Get(LeaderMetadataKey); len(got) != 1 || got[0] != lead {
			t.Fatalf("follower %s trailer %v, want %s=%s", a, trailer, LeaderMetadataKey, lead)
		}
		resp, err := http.Post("http://"+a+"/v1/jobs", "application/json", strings.NewReader(`{}`))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get(LeaderHeader) != lead {
			t.Fatalf("follower %s over HTTP: %d %s=%q", a, resp.StatusCode, LeaderHeader, resp.Header.Get(LeaderHeader))
		}
		checkFollowerSlurmAnswer(t, a, lead, "/slurm/v0.0.44/jobs/")
		checkFollowerSlurmAnswer(t, a, lead, "/slurmdb/v0.0.44/ping/")
		st, err := pb.NewControllersClient(cl.Conn()).Status(context.Background(), &pb.ControllerStatusRequest{})
		if err != nil || st.GetRole() != "Follower" || st.GetLeader() != lead || len(st.GetVoters()) != 3 || st.GetServing() {
			t.Fatalf("follower %s status %+v, %v", a, st, err)
		}
	}
}

func TestNoAcknowledgedSubmissionIsLostWhenTheLeaderCrashes(t *testing.T) {
	tr := startTrio(t)
	first := tr.leader()
	list := strings.Join(tr.addrs, ",")
	const clients, each = 8, 25
	var mu sync.Mutex
	acked := map[uint64]string{}
	var wg sync.WaitGroup
	crashed := make(chan struct{})
	for w := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cl := tr.client(list, "alice", auth.RoleUser)
			for i := range each {
				if w == 0 && i == each/3 {
					tr.crash(first)
					close(crashed)
				}
				name := fmt.Sprintf("w%d-%d", w, i)
				id, err := cl.Submit(context.Background(), gpuJob(name, 1))
				if err != nil {
					t.Errorf("submit %s: %v", name, err)
					return
				}
				mu.Lock()
				acked[id] = name
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	<-crashed
	next := tr.leader()
	if next == first {
		t.Fatal("the crashed controller still leads")
	}
	jobs, err := tr.client(list, "root", auth.RoleAdmin).ListJobs(context.Background(), &pb.ListJobsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]int{}
	for _, j := range jobs {
		byName[j.GetSpec().GetName()]++
		if want, ok := acked[j.GetId()]; ok && want != j.GetSpec().GetName() {
			t.Errorf("job %d is %q on the new leader, acknowledged as %q", j.GetId(), j.GetSpec().GetName(), want)
		}
	}
	for id, name := range acked {
		if byName[name] == 0 {
			t.Errorf("acknowledged job %d (%s) lost in the failover", id, name)
		}
	}
	for name, n := range byName {
		if n > 1 {
			t.Errorf("submission %s created %d jobs (a retried submission must not duplicate)", name, n)
		}
	}
	if len(acked) != clients*each {
		t.Errorf("%d submissions acknowledged, want %d", len(acked), clients*each)
	}
}

func TestARetriedSubmissionCreatesOneJob(t *testing.T) {
	tr := startTrio(t)
	lead := tr.leader()
	jobs := pb.NewJobsClient(tr.client(strings.Join(tr.addrs, ","), "alice", auth.RoleUser).Conn())
	req := &pb.SubmitRequest{Spec: gpuJob("once", 1), IdempotencyKey: "k-1"}
	a, err := jobs.Submit(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	// The leader goes; the client sends the same submission to the next.
	tr.crash(lead)
	next := tr.leader()
	req.Spec = gpuJob("once", 1)
	_ = next
	b, err := jobs.Submit(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if a.GetJobId() != b.GetJobId() {
		t.Fatalf("the retried submission got job %d, the first %d", b.GetJobId(), a.GetJobId())
	}
}

func TestMembershipChangesAreForAdmins(t *testing.T) {
	tr := startTrio(t)
	lead := tr.leader()
	var leaving string
	for _, a := range tr.addrs {
		if a != lead {
			leaving = a
			break
		}
	}
	list := strings.Join(tr.addrs, ",")
	user := pb.NewControllersClient(tr.client(list, "alice", auth.RoleUser).Conn())
	if _, err := user.Leave(context.Background(), &pb.ControllerChange{Address: leaving}); status.Code(err) != codes.PermissionDenied {
		t.Fatalf("a user removing a controller: %v, want PermissionDenied", err)
	}
	admin := pb.NewControllersClient(tr.client(list, "root", auth.RoleAdmin).Conn())
	st, err := admin.Leave(context.Background(), &pb.ControllerChange{Address: leaving})
	if err != nil {
		t.Fatal(err)
	}
	if len(st.GetVoters()) != 2 {
		t.Fatalf("voters after leave: %v", st.GetVoters())
	}
	if _, err := admin.Join(context.Background(), &pb.ControllerChange{Address: "no-port"}); status.Code(err) != codes.InvalidArgument {
		t.Fatalf("join of a bad address: %v", err)
	}
	st, err = admin.Join(context.Background(), &pb.ControllerChange{Address: leaving})
	if err != nil {
		t.Fatal(err)
	}
	if len(st.GetVoters()) != 3 {
		t.Fatalf("voters after join: %v", st.GetVoters())
	}
}

func TestAControllerNotInTheListRefusesToStart(t *testing.T) {
	cfg, err := config.Parse("test.yaml", []byte(testCluster+"controllers: [127.0.0.1:1, 127.0.0.1:2, 127.0.0.1:3]\n"))
	if err != nil {
		t.Fatal(err)
	}
	c, err := New(Options{Config: cfg, Listen: "127.0.0.1:0", StateDir: t.TempDir(), MetricsAddr: "off", NoScheduler: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Start(context.Background()); err == nil || !strings.Contains(err.Error(), "is not in controllers") {
		t.Fatalf("start = %v, want a refusal naming the list", err)
	}
}

func TestARunningJobSurvivesTheFailover(t *testing.T) {
	tr := startTrio(t)
	list := strings.Join(tr.addrs, ",")
	ctx := context.Background()
	tok, err := auth.Sign(tr.key, auth.Claims{User: "n1", Role: auth.RoleAgent, Node: "n1", IssuedAt: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	agent, err := client.Dial(ctx, list, tok)
	if err != nil {
		t.Fatal(err)
	}
	defer agent.Close()
	register := func(running ...uint64) {
		t.Helper()
		req := &pb.RegisterRequest{Node: "n1", Inventory: api.InventoryToProto(inventory("n1", 16, 4)), AgentVersion: "test"}
		for _, id := range running {
			req.Running = append(req.Running, &pb.RunningJob{JobId: id})
		}
		if _, err := agent.Register(ctx, req); err != nil {
			t.Fatal(err)
		}
	}
	register()
	alice := tr.client(list, "alice", auth.RoleUser)
	id, err := alice.Submit(ctx, gpuJob("long", 2))
	if err != nil {
		t.Fatal(err)
	}
	lead := tr.leader()
	if err := tr.cs[lead].schedulePass(ctx); err != nil {
		t.Fatal(err)
	}
	before, err := alice.GetJob(ctx, id, false)
	if err != nil || before.GetState() != StateRunning {
		t.Fatalf("before the failover: %v %v", before.GetState(), err)
	}
	tr.crash(lead)
	next := tr.leader()
	// The agent finds the new leader and reports the job it still runs.
	register(id)
	if err := tr.cs[next].schedulePass(ctx); err != nil {
		t.Fatal(err)
	}
	after, err := alice.GetJob(ctx, id, false)
	if err != nil || after.GetState() != StateRunning {
		t.Fatalf("after the failover the job is %v (%v), want it still RUNNING", after.GetState(), err)
	}
	if fmt.Sprint(after.GetAlloc()) != fmt.Sprint(before.GetAlloc()) {
		t.Fatalf("allocation changed across the failover: %v, was %v", after.GetAlloc(), before.GetAlloc())
	}
	// The new leader's first pass sees the same allocation: a second job
	// gets the other two GPUs, never the running job's.
	second, err := alice.Submit(ctx, gpuJob("second", 2))
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.cs[next].schedulePass(ctx); err != nil {
		t.Fatal(err)
	}
	j2, err := alice.GetJob(ctx, second, false)
	if err != nil || j2.GetState() != StateRunning {
		t.Fatalf("second job %v %v", j2.GetState(), err)
	}
	held := map[string]bool{}
	for _, a := range before.GetAlloc() {
		for _, d := range a.GetDevices() {
			held[d] = true
		}
	}
	for _, a := range j2.GetAlloc() {
		for _, d := range a.GetDevices() {
			if held[d] {
				t.Fatalf("device %s given to job %d while job %d runs on it", d, second, id)
			}
		}
	}
}

func TestLosingAQuorumStopsAcknowledgementsUntilItIsBack(t *testing.T) {
	tr := startTrio(t)
	list := strings.Join(tr.addrs, ",")
	alice := tr.client(list, "alice", auth.RoleUser)
	ctx := context.Background()
	first, err := alice.Submit(ctx, gpuJob("before", 1))
	if err != nil {
		t.Fatal(err)
	}
	lead := tr.leader()
	var down []string
	for _, a := range tr.addrs {
		if a != lead {
			down = append(down, a)
			tr.crash(a)
		}
	}
	// Alone, the leader stops leading once its lease runs out.
	eventually(t, func() bool { return !tr.cs[lead].serving() }, "the controller left alone still serves")
	short, cancel := context.WithTimeout(ctx, 2*time.Second)
	_, err = alice.Submit(short, gpuJob("during", 1))
	cancel()
	if err == nil {
		t.Fatal("a submission was acknowledged by one controller of three")
	}
	if msg := client.Message(err); !strings.Contains(msg, "a quorum of controllers must be up") {
		t.Fatalf("refusal without a quorum: %q, want one saying a quorum must be up", msg)
	}
	tr.start(down[0])
	tr.leader()
	after, err := alice.Submit(ctx, gpuJob("after", 1))
	if err != nil {
		t.Fatalf("with a quorum back: %v", err)
	}
	for _, id := range []uint64{first, after} {
		if _, err := alice.GetJob(ctx, id, false); err != nil {
			t.Fatalf("job %d after the quorum came back: %v", id, err)
		}
	}
}
