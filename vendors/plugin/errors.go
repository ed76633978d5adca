package plugin

import (
	"context"
	"errors"
	"fmt"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/parityhpc/parity/gres"
	"github.com/parityhpc/parity/vendors"
)

// Sentinel errors of the plugin client.
var (
	// ErrVersionMismatch is returned by Dial when the adapter speaks none of
	// the client's protocol versions.
	ErrVersionMismatch = errors.New("plugin: no common protocol version")
	// ErrUnavailable wraps calls that could not reach the adapter (not
	// started, restarting, gone).
	ErrUnavailable = errors.New("plugin: adapter unavailable")
)

// errorDomain and the reasons below travel in a google.rpc.ErrorInfo status
// detail, so sentinels survive the wire whatever the message says.
const (
	errorDomain         = "parity.plugin.v1"
	reasonNotApplicable = "NOT_APPLICABLE"
	reasonUnknownDevice = "UNKNOWN_DEVICE"
	reasonVersion       = "PROTOCOL_VERSION"
)

// RemoteError is an error the adapter returned, or a failure to reach it.
// It unwraps to the sentinel its status carried (vendors.ErrNotApplicable,
// gres.ErrUnknownDevice, ErrVersionMismatch, ErrUnavailable,
// errors.ErrUnsupported, context.Canceled, context.DeadlineExceeded) when
// there is one.
type RemoteError struct {
	Op      string     // the call, e.g. "discover"
	Code    codes.Code // the gRPC status code
	Message string     // the adapter's message
	is      error
}

func (e *RemoteError) Error() string { return fmt.Sprintf("plugin: %s: %s", e.Op, e.Message) }

// Unwrap returns the sentinel the status carried, or nil.
func (e *RemoteError) Unwrap() error { return e.is }

// withReason builds a status carrying an ErrorInfo reason.
func withReason(code codes.Code, reason, msg string) error {
	st := status.New(code, msg)
	if d, err := st.WithDetails(&errdetails.ErrorInfo{Reason: reason, Domain: errorDomain}); err == nil {
		st = d
	}
	return st.Err()
}

// toStatus maps a driver error to a gRPC status on the adapter's side.
func toStatus(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	switch {
	case errors.Is(err, vendors.ErrNotApplicable):
		return withReason(codes.FailedPrecondition, reasonNotApplicable, msg)
	case errors.Is(err, gres.ErrUnknownDevice):
		return withReason(codes.NotFound, reasonUnknownDevice, msg)
	case errors.Is(err, context.Canceled):
		return status.Error(codes.Canceled, msg)
	case errors.Is(err, context.DeadlineExceeded):
		return status.Error(codes.DeadlineExceeded, msg)
	case errors.Is(err, errors.ErrUnsupported):
		return status.Error(codes.Unimplemented, msg)
	}
	if st, ok := status.FromError(err); ok {
		return st.Err() // already a status, e.g. from the plugin's own checks
	}
	return status.Error(codes.Unknown, msg)
}

// fromStatus maps a call's error back to a Go error on the agent's side.
func fromStatus(op string, err error) error {
	if err == nil {
		return nil
	}
	st, ok := status.FromError(err)
	if !ok {
		return fmt.Errorf("plugin: %s: %w", op, err)
	}
	re := &RemoteError{Op: op, Code: st.Code(), Message: st.Message()}
	for _, d := range st.Details() {
		info, ok := d.(*errdetails.ErrorInfo)
		if !ok || info.GetDomain() != errorDomain {
			continue
		}
		switch info.GetReason() {
		case reasonNotApplicable:
			re.is = vendors.ErrNotApplicable
		case reasonUnknownDevice:
			re.is = gres.ErrUnknownDevice
		case reasonVersion:
			re.is = ErrVersionMismatch
		}
	}
	if re.is == nil {
		switch st.Code() {
		case codes.Canceled:
			re.is = context.Canceled
		case codes.DeadlineExceeded:
			re.is = context.DeadlineExceeded
		case codes.Unavailable:
			re.is = ErrUnavailable
		case codes.Unimplemented:
			re.is = errors.ErrUnsupported
		}
	}
	return re
}
