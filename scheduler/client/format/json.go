package format

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// Message returns m in its proto3 JSON form with every field present
// (lowerCamelCase names that never change, 64-bit integers as strings),
// without the random spacing protojson adds, so output is reproducible.
func Message(m proto.Message) (json.RawMessage, error) {
	b, err := protojson.MarshalOptions{EmitUnpopulated: true}.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("format: encode %T: %w", m, err)
	}
	var out bytes.Buffer
	if err := json.Compact(&out, b); err != nil {
		return nil, fmt.Errorf("format: compact %T: %w", m, err)
	}
	return out.Bytes(), nil
}

// Messages returns a JSON array of messages (empty, never null).
func Messages[T proto.Message](ms []T) (json.RawMessage, error) {
	items := make([]json.RawMessage, len(ms))
	for i, m := range ms {
		raw, err := Message(m)
		if err != nil {
			return nil, err
		}
		items[i] = raw
	}
	return json.Marshal(items)
}

// WriteJSON writes v (maps, slices and RawMessages from Message) indented
// by two spaces, with a final newline; map keys come out sorted.
func WriteJSON(w io.Writer, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("format: encode JSON: %w", err)
	}
	_, err = w.Write(append(b, '\n'))
	return err
}
