package workflow

import (
	"errors"

	"github.com/parityhpc/parity/scheduler/core"
)

// ErrAdminHold refuses a user's release of a job an administrator holds.
var ErrAdminHold = errors.New("workflow: the job is held by an administrator; only an administrator can release it")

// Hold applies scontrol hold/uhold: an administrator's hold is an admin
// hold (JobHeldAdmin), a user's a user hold (JobHeldUser); a user hold
// never replaces an admin hold.
func Hold(cur core.Hold, byAdmin bool) core.Hold {
	if byAdmin || cur == core.HoldAdmin {
		return core.HoldAdmin
	}
	return core.HoldUser
}

// Release applies scontrol release: a user may release a user hold, an
// administrator any hold.
func Release(cur core.Hold, byAdmin bool) (core.Hold, error) {
	if cur == core.HoldAdmin && !byAdmin {
		return cur, ErrAdminHold
	}
	return core.HoldNone, nil
}

// HoldReason is the pending reason a hold shows ("" for none).
func HoldReason(h core.Hold) core.Reason {
	switch h {
	case core.HoldAdmin:
		return core.ReasonJobHeldAdmin
	case core.HoldUser:
		return core.ReasonJobHeldUser
	}
	return ""
}
