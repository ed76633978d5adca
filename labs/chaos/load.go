package chaos

import (
	"context"
	"fmt"
	"io"
	"net"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/parityhpc/parity/scheduler/api/jsonapi"
	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/auth"
)

// Sizes of the load: the 200 calls of 4 MiB, half with no token
// and half with a forged one, in waves so growth that stays shows.
const (
	loadCalls   = 200
	loadWaves   = 3
	loadMessage = 4 << 20
	slowConns   = 200
	slowSent    = 1 << 10
)

// runLoad is the resource-exhaustion scenario: unauthenticated calls
// with large messages (the controller's memory against its ceiling) and
// HTTP bodies that stall (how long until the server closes them).
func runLoad(ctx context.Context, l *lab, o *Options) []Row {
	return timedRows(ctx, l, o, unauthLoad, slowBodies)
}

// timedRows runs a scenario's parts one after the other, each a row that
// carries its own time.
func timedRows(ctx context.Context, l *lab, o *Options, parts ...func(context.Context, *lab, *Options) Row) []Row {
	rows := make([]Row, 0, len(parts))
	for _, part := range parts {
		t0 := time.Now()
		r := part(ctx, l, o)
		r.Elapsed = time.Since(t0)
		rows = append(rows, r)
	}
	return rows
}

func unauthLoad(ctx context.Context, l *lab, o *Options) Row {
	row := Row{Scenario: "unauthenticated 4 MiB calls", Cases: loadCalls * loadWaves}
	base, _, err := l.ctl.memory()
	if err == nil {
		err = l.ctl.resetPeak()
	}
	if err != nil {
		row.fail("%v", err)
		return row
	}
	var peak atomic.Int64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() { defer close(sampled); sampleRSS(l.ctl, &peak, stop) }()
	script := "#!/bin/sh\n" + strings.Repeat("#", loadMessage-1024)
	got := map[codes.Code]int{}
	for w := 0; w < loadWaves && ctx.Err() == nil; w++ {
		for c, n := range unauthWave(ctx, l.p.Addr, script) {
			got[c] += n
		}
		o.progressf("load: wave %d/%d: controller at %s, peak %s", w+1, loadWaves, mib(currentRSS(l.ctl)), mib(peak.Load()))
	}
	close(stop)
	<-sampled
	if _, hwm, err := l.ctl.memory(); err == nil {
		peak.Store(max(peak.Load(), hwm))
	}
	grew := peak.Load() - base
	row.add("refused", fmt.Sprintf("%d of %d", row.Cases-got[codes.OK], row.Cases))
	row.add("peak RSS", fmt.Sprintf("%s (from %s)", mib(peak.Load()), mib(base)))
	row.add("growth", fmt.Sprintf("%s of %s allowed", mib(grew), mib(o.RSSCeiling)))
	if grew > o.RSSCeiling {
		row.fail("the controller grew by %s under unauthenticated load, past its ceiling of %s", mib(grew), mib(o.RSSCeiling))
	}
	if got[codes.OK] > 0 {
		row.fail("%d calls without a valid token were accepted", got[codes.OK])
	}
	var codesSeen []string
	for c, n := range got {
		if c != codes.Unauthenticated {
			codesSeen = append(codesSeen, fmt.Sprintf("%s ×%d", c, n))
		}
	}
	sort.Strings(codesSeen)
	if len(codesSeen) > 0 {
		row.Notes = append(row.Notes, "answers besides Unauthenticated: "+strings.Join(codesSeen, ", "))
	}
	if !l.ctl.alive() {
		row.fail("the controller died under the load (see %s)", l.dir)
	}
	return row
}

// unauthWave sends loadCalls submissions at once, each on a connection
// of its own, half without a token and half with a forged one, and
// counts the answers' codes.
func unauthWave(ctx context.Context, addr, script string) map[codes.Code]int {
	var mu sync.Mutex
	got := map[codes.Code]int{}
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := 0; i < loadCalls; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			opts := []grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials())}
			if i%2 == 1 {
				opts = append(opts, grpc.WithPerRPCCredentials(auth.TokenCredentials("pt1.Zm9yZ2Vk.bm8gc2lnbmF0dXJl")))
			}
			code := codes.Unknown
			if conn, err := grpc.NewClient(addr, opts...); err == nil {
				<-start
				cctx, cancel := context.WithTimeout(ctx, time.Minute)
				_, err = pb.NewJobsClient(conn).Submit(cctx, &pb.SubmitRequest{Spec: &pb.JobSpec{Script: script, Hold: true}},
					grpc.MaxCallSendMsgSize(2*loadMessage))
				cancel()
				conn.Close()
				code = status.Code(err)
			}
			mu.Lock()
			got[code]++
			mu.Unlock()
		}()
	}
	close(start)
	wg.Wait()
	return got
}

// sampleRSS keeps the largest resident set it sees until stop closes.
func sampleRSS(d *daemon, peak *atomic.Int64, stop <-chan struct{}) {
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		if rss := currentRSS(d); rss > peak.Load() {
			peak.Store(rss)
		}
		select {
		case <-stop:
			return
		case <-tick.C:
		}
	}
}

func currentRSS(d *daemon) int64 {
	rss, _, _ := d.memory()
	return rss
}

// slowBodies opens slowConns authenticated HTTP submissions that declare
// a 4 MiB body, send 1 KiB of it and stall, and times how long the
// server keeps each open.
func slowBodies(ctx context.Context, l *lab, o *Options) Row {
	row := Row{Scenario: "slow HTTP bodies (4 MiB declared, 1 KiB sent)", Cases: slowConns}
	head := fmt.Sprintf("POST %s HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: %s\r\nContent-Length: %d\r\n\r\n",
		jsonapi.SubmitPath, l.p.Addr, l.token(userAlice, auth.RoleUser), jsonapi.ContentType, loadMessage)
	body := `{"spec":{"script":"#!/bin/sh\n` + strings.Repeat("#", slowSent)
	var mu sync.Mutex
	var open []time.Duration // how long each stayed open; -1: still open at the wait's end
	var failed []string
	var wg sync.WaitGroup
	for i := 0; i < slowConns; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d, err := stallBody(ctx, l.p.Addr, head+body[:slowSent], o.SlowWait)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				failed = append(failed, err.Error())
				return
			}
			open = append(open, d)
		}()
	}
	wg.Wait()
	slices.Sort(open)
	closed := 0
	for _, d := range open {
		if d >= 0 {
			closed++
		}
	}
	row.add("closed", fmt.Sprintf("%d of %d", closed, slowConns))
	if closed > 0 {
		i := slices.IndexFunc(open, func(d time.Duration) bool { return d >= 0 })
		row.add("after (median)", secs(open[i+closed/2]))
		row.add("max", secs(open[len(open)-1]))
	}
	if closed < slowConns {
		row.warn("%d connections were still open %s after they stalled", slowConns-closed-len(failed), o.SlowWait)
	}
	if len(failed) > 0 {
		row.warn("%d connections failed before they stalled, first: %s", len(failed), failed[0])
	}
	o.progressf("load: %d of %d stalled bodies closed by the server", closed, slowConns)
	return row
}

// stallBody sends req's head and the start of its body and waits until
// the server closes the connection (or wait passes: -1).
func stallBody(ctx context.Context, addr, partial string, wait time.Duration) (time.Duration, error) {
	var dialer net.Dialer
	c, err := dialer.DialContext(ctx, "tcp", addr)
	if err != nil {
		return 0, err
	}
	defer c.Close()
	if _, err := io.WriteString(c, partial); err != nil {
		return 0, err
	}
	sent := time.Now()
	_ = c.SetReadDeadline(sent.Add(wait))
	_, err = io.Copy(io.Discard, c)
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		return -1, nil
	}
	return time.Since(sent), nil
}
