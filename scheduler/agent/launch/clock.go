package launch

import "time"

// Clock is the runtime's time source; tests inject a manual one so time
// limits fire exactly when the test says.
type Clock interface {
	Now() time.Time
	// AfterFunc calls f in its own goroutine once d has passed.
	AfterFunc(d time.Duration, f func()) Timer
}

// Timer is a pending AfterFunc.
type Timer interface {
	// Stop prevents the call if it has not happened; it reports whether
	// it did prevent it.
	Stop() bool
}

type realClock struct{}

// RealClock is the wall clock.
func RealClock() Clock { return realClock{} }

func (realClock) Now() time.Time                            { return time.Now() }
func (realClock) AfterFunc(d time.Duration, f func()) Timer { return time.AfterFunc(d, f) }
