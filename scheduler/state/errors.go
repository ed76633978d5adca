package state

import "errors"

// Kinds of refusal. A refused command changes nothing; its error is an
// *Error that says why in the words the user sees and unwraps to one of
// these, which the service edge maps to its status codes.
var (
	ErrNotFound     = errors.New("state: no such job")
	ErrPrecondition = errors.New("state: the job is not in a state that allows it")
	ErrPermission   = errors.New("state: permission denied")
	ErrExhausted    = errors.New("state: a limit is reached")
	ErrConflict     = errors.New("state: the allocation is held by another job")
	ErrInvalid      = errors.New("state: invalid command")
)

// Error is a refusal: Msg for the user, Kind for the edge.
type Error struct {
	Kind error
	Msg  string
}

func (e *Error) Error() string { return e.Msg }
func (e *Error) Unwrap() error { return e.Kind }

func refuse(kind error, msg string) error { return &Error{Kind: kind, Msg: msg} }
