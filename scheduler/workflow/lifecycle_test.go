package workflow

import (
	"errors"
	"testing"
	"time"

	"github.com/parityhpc/parity/scheduler/core"
	"github.com/parityhpc/parity/scheduler/jobspec"
)

func TestHoldRelease(t *testing.T) {
	tests := []struct {
		name    string
		cur     core.Hold
		admin   bool
		hold    core.Hold
		reason  core.Reason
		release error
	}{
		{"user holds", core.HoldNone, false, core.HoldUser, "JobHeldUser", nil},
		{"admin holds", core.HoldNone, true, core.HoldAdmin, "JobHeldAdmin", ErrAdminHold},
		{"user hold does not lift an admin hold", core.HoldAdmin, false, core.HoldAdmin, "JobHeldAdmin", ErrAdminHold},
		{"admin hold replaces a user hold", core.HoldUser, true, core.HoldAdmin, "JobHeldAdmin", ErrAdminHold},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := Hold(tc.cur, tc.admin)
			if h != tc.hold || HoldReason(h) != tc.reason {
				t.Fatalf("hold %q reason %q, want %q %q", h, HoldReason(h), tc.hold, tc.reason)
			}
			got, err := Release(h, false)
			if !errors.Is(err, tc.release) {
				t.Fatalf("user release: %v, want %v", err, tc.release)
			}
			if err == nil && got != core.HoldNone || err != nil && got != h {
				t.Fatalf("user release left %q", got)
			}
			if got, err := Release(h, true); err != nil || got != core.HoldNone {
				t.Fatalf("admin release: %q %v", got, err)
			}
		})
	}
	if HoldReason(core.HoldNone) != "" {
		t.Fatal("no hold has a reason")
	}
}

func TestRequeue(t *testing.T) {
	pol := RequeuePolicy{Delay: 2 * time.Minute, MaxLaunchFailures: 2}
	tests := []struct {
		name     string
		st       RequeueState
		cause    RequeueCause
		admin    bool
		err      error
		requeued bool
		run, now State
		restarts int
		hold     core.Hold
		reason   core.Reason
	}{
		{name: "preempted", cause: CausePreempt, requeued: true, run: Preempted, now: Pending, restarts: 1, reason: "BeginTime"},
		{name: "preempted, --no-requeue", st: RequeueState{NoRequeue: true}, cause: CausePreempt, run: Preempted, now: Preempted},
		{name: "node failure", st: RequeueState{Restarts: 2}, cause: CauseNodeFail, requeued: true, run: NodeFail, now: Pending, restarts: 3, reason: "BeginTime"},
		{name: "node failure, --no-requeue", st: RequeueState{NoRequeue: true}, cause: CauseNodeFail, run: NodeFail, now: NodeFail},
		{name: "scontrol requeue", cause: CauseAdmin, admin: true, requeued: true, run: Requeued, now: Pending, restarts: 1, reason: "BeginTime"},
		{name: "scontrol requeue, --no-requeue", st: RequeueState{NoRequeue: true}, cause: CauseAdmin, err: ErrNotRequeueable},
		{name: "requeuehold by a user", cause: CauseAdminHold, requeued: true, run: Requeued, now: RequeueHold, restarts: 1, hold: core.HoldUser, reason: "JobHeldUser"},
		{name: "requeuehold by an admin", cause: CauseAdminHold, admin: true, requeued: true, run: Requeued, now: RequeueHold, restarts: 1, hold: core.HoldAdmin, reason: "JobHeldAdmin"},
		{name: "launch failure", st: RequeueState{LaunchFailures: 1}, cause: CauseLaunchFail, requeued: true, run: Requeued, now: Pending, restarts: 1, reason: "BeginTime"},
		{name: "too many launch failures", st: RequeueState{LaunchFailures: 2}, cause: CauseLaunchFail, requeued: true, run: Requeued, now: Pending, restarts: 1, hold: core.HoldAdmin, reason: ReasonJobHoldMaxRequeue},
		{name: "launch failure, --no-requeue", st: RequeueState{NoRequeue: true}, cause: CauseLaunchFail, run: Failed, now: Failed, reason: "JobLaunchFailure"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, err := Requeue(tc.st, tc.cause, tc.admin, t0, pol)
			if !errors.Is(err, tc.err) {
				t.Fatalf("error %v, want %v", err, tc.err)
			}
			if err != nil {
				return
			}
			if out.Requeued != tc.requeued || out.RunState != tc.run || out.State != tc.now || out.Next.Restarts != tc.restarts ||
				out.Next.Hold != tc.hold || out.Reason != tc.reason {
				t.Fatalf("got %+v", out)
			}
			if out.Requeued && !out.Next.Begin.Equal(t0.Add(pol.Delay)) {
				t.Fatalf("begins %v, want now + delay", out.Next.Begin)
			}
		})
	}
	if _, err := Requeue(RequeueState{}, "bogus", false, t0, pol); err == nil {
		t.Fatal("unknown cause accepted")
	}
	yes := false
	if Requeueable(nil, true) != true || Requeueable(&yes, true) != false {
		t.Fatal("Requeueable ignores its inputs")
	}
}

func TestTimeLimitPlan(t *testing.T) {
	sig, err := jobspec.ParseSignal("USR1@120")
	if err != nil {
		t.Fatal(err)
	}
	got := TimeLimitPlan(t0, time.Hour, &sig, time.Minute, 30*time.Second)
	want := []Action{{t0.Add(59 * time.Minute), 10}, {t0.Add(61 * time.Minute), SIGTERM}, {t0.Add(61*time.Minute + 30*time.Second), SIGKILL}}
	if len(got) != len(want) {
		t.Fatalf("plan %v", got)
	}
	for i := range want {
		if !got[i].At.Equal(want[i].At) || got[i].Signal != want[i].Signal {
			t.Fatalf("plan %v, want %v", got, want)
		}
	}
	early := jobspec.Signal{Number: 12, Lead: 2 * time.Hour}
	if p := TimeLimitPlan(t0, time.Hour, &early, 0, 0); !p[0].At.Equal(t0) {
		t.Fatalf("a lead longer than the limit signals at the start: %v", p)
	}
	if p := TimeLimitPlan(t0, 0, &sig, 0, 0); p != nil {
		t.Fatalf("no limit, no plan: %v", p)
	}
	if p := PreemptPlan(t0, time.Minute); len(p) != 3 || p[1].Signal != SIGTERM || !p[2].At.Equal(t0.Add(time.Minute)) || p[2].Signal != SIGKILL {
		t.Fatalf("preempt plan %v", p)
	}
}

func TestDeadlineExpired(t *testing.T) {
	for _, tc := range []struct {
		name             string
		deadline         time.Duration
		limit, timeMin   time.Duration
		expired, noDline bool
	}{
		{name: "fits", deadline: 2 * time.Hour, limit: time.Hour},
		{name: "exactly", deadline: time.Hour, limit: time.Hour},
		{name: "too late", deadline: 30 * time.Minute, limit: time.Hour, expired: true},
		{name: "time-min still fits", deadline: 30 * time.Minute, limit: time.Hour, timeMin: 20 * time.Minute},
		{name: "no limit before the deadline", deadline: time.Hour},
		{name: "no limit past the deadline", deadline: -time.Minute, expired: true},
		{name: "no deadline", limit: time.Hour, noDline: true},
	} {
		dl := t0.Add(tc.deadline)
		if tc.noDline {
			dl = time.Time{}
		}
		if got := DeadlineExpired(dl, tc.limit, tc.timeMin, t0); got != tc.expired {
			t.Errorf("%s: expired = %v", tc.name, got)
		}
	}
}

func TestStates(t *testing.T) {
	for _, s := range []State{Completed, Failed, Cancelled, Timeout, NodeFail, Preempted, OutOfMemory, BootFail, Deadline} {
		if !s.Finished() || s.Active() || !s.Valid() {
			t.Errorf("%s should be finished", s)
		}
	}
	for _, s := range []State{Pending, Running, Suspended, RequeueHold} {
		if s.Finished() || !s.Active() {
			t.Errorf("%s should be active", s)
		}
	}
	if State("nope").Valid() || !Completed.Succeeded() || Failed.Succeeded() {
		t.Error("Valid/Succeeded")
	}
}
