package client

import (
	"errors"
	"io"

	"google.golang.org/grpc"
)

// collect reads a listing the controller streams in several messages (so
// that no answer outgrows gRPC's message bound) and concatenates their
// items, in order.
func collect[R any, T any](st grpc.ServerStreamingClient[R], err error, items func(*R) []T) ([]T, error) {
	if err != nil {
		return nil, err
	}
	var out []T
	for {
		r, err := st.Recv()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		out = append(out, items(r)...)
	}
}
