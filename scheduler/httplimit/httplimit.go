package httplimit

import (
	"fmt"
	"log/slog"
	"net/http"
	"time"
)

// Limits bound a server's requests. Zero fields take the defaults a
// server is built with (see Server).
type Limits struct {
	// ReadHeader bounds the time from a request's start (or the end of
	// the previous one) to the end of its headers.
	ReadHeader time.Duration
	// Read bounds the time to read a whole request, body included: a
	// client that declares a large body and stalls is cut off by it.
	Read time.Duration
	// Write bounds the time from the end of the request's headers to the
	// end of the answer; zero leaves it unbounded (a handler that waits
	// for a durable commit).
	Write time.Duration
	// Idle bounds how long a kept-alive connection waits for its next
	// request.
	Idle time.Duration
	// MaxBody bounds a request's body on every path: one declared larger
	// is refused with 413 before it is read, one that grows larger fails
	// its read (http.MaxBytesReader).
	MaxBody int64
	// MaxHeaderBytes bounds the request line and headers.
	MaxHeaderBytes int
}

// Or returns l with its zero fields taken from d.
func (l Limits) Or(d Limits) Limits {
	if l.ReadHeader <= 0 {
		l.ReadHeader = d.ReadHeader
	}
	if l.Read <= 0 {
		l.Read = d.Read
	}
	if l.Write <= 0 {
		l.Write = d.Write
	}
	if l.Idle <= 0 {
		l.Idle = d.Idle
	}
	if l.MaxBody <= 0 {
		l.MaxBody = d.MaxBody
	}
	if l.MaxHeaderBytes <= 0 {
		l.MaxHeaderBytes = d.MaxHeaderBytes
	}
	return l
}

// Metrics returns the defaults for a Prometheus endpoint: GET requests
// without a body, answered at once.
func Metrics() Limits {
	return Limits{ReadHeader: 5 * time.Second, Read: 10 * time.Second, Write: 30 * time.Second,
		Idle: time.Minute, MaxBody: 64 << 10, MaxHeaderBytes: 64 << 10}
}

// TooLarge answers a request whose body is over limit.
type TooLarge func(w http.ResponseWriter, r *http.Request, limit int64)

// PlainTooLarge answers 413 in plain text, naming the limit.
func PlainTooLarge(w http.ResponseWriter, r *http.Request, limit int64) {
	http.Error(w, Message(r, limit), http.StatusRequestEntityTooLarge)
}

// Message says why a request's body was refused.
func Message(r *http.Request, limit int64) string {
	if r.ContentLength > limit {
		return fmt.Sprintf("%s %s: request body of %d bytes is over the %d-byte limit", r.Method, r.URL.Path, r.ContentLength, limit)
	}
	return fmt.Sprintf("%s %s: request body over the %d-byte limit", r.Method, r.URL.Path, limit)
}

// Body bounds every request's body at limit bytes: one that declares more
// is answered by tooLarge (nil: PlainTooLarge) before it is read, and its
// connection closed rather than drained; a body sent without a length is
// cut at limit by http.MaxBytesReader, whose error the handler answers.
func Body(h http.Handler, limit int64, tooLarge TooLarge) http.Handler {
	if tooLarge == nil {
		tooLarge = PlainTooLarge
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength > limit {
			w.Header().Set("Connection", "close")
			tooLarge(w, r, limit)
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, limit)
		h.ServeHTTP(w, r)
	})
}

// Server is an http.Server for h with l's bounds (zero fields from
// defaults) on every request and path.
func Server(h http.Handler, l, defaults Limits, tooLarge TooLarge, log *slog.Logger) *http.Server {
	l = l.Or(defaults)
	srv := &http.Server{Handler: Body(h, l.MaxBody, tooLarge), ReadHeaderTimeout: l.ReadHeader, ReadTimeout: l.Read,
		WriteTimeout: l.Write, IdleTimeout: l.Idle, MaxHeaderBytes: l.MaxHeaderBytes}
	if log != nil {
		srv.ErrorLog = slog.NewLogLogger(log.Handler(), slog.LevelDebug)
	}
	return srv
}
