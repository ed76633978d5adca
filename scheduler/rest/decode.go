package rest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"unicode/utf8"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// readBody reads the request body under the handler's bound; an over-long
// body is refused whole, never read in part.
func (h *Handler) readBody(c *call) ([]byte, error) {
	if ct := c.r.Header.Get("Content-Type"); ct != "" && !strings.HasPrefix(ct, "application/json") {
		return nil, status.Errorf(codes.InvalidArgument, "Content-Type %q: the body must be application/json", ct)
	}
	body, err := io.ReadAll(http.MaxBytesReader(c.w, c.r.Body, h.b.MaxBody))
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return nil, status.Errorf(codes.ResourceExhausted, "request body over %d bytes", tooBig.Limit)
	}
	if err != nil {
		return nil, status.Errorf(codes.InvalidArgument, "read request body: %v", err)
	}
	return body, nil
}

// decodeStrict decodes one JSON object into v: unknown properties, wrong
// types, invalid UTF-8 and trailing data are errors that name the field.
// what names the schema in messages.
func decodeStrict(body []byte, what string, v any) error {
	if len(bytes.TrimSpace(body)) == 0 {
		return status.Errorf(codes.InvalidArgument, "%s: empty request body (want a JSON object)", what)
	}
	if !utf8.Valid(body) {
		return status.Errorf(codes.InvalidArgument, "%s: request body is not valid UTF-8", what)
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return status.Errorf(codes.InvalidArgument, "%s: %s", what, describeJSONError(err))
	}
	if dec.More() {
		return status.Errorf(codes.InvalidArgument, "%s: data after the JSON object", what)
	}
	if _, err := dec.Token(); err != io.EOF {
		return status.Errorf(codes.InvalidArgument, "%s: data after the JSON object", what)
	}
	return nil
}

// describeJSONError names the field and what was wrong with it.
func describeJSONError(err error) string {
	var typeErr *json.UnmarshalTypeError
	var syntaxErr *json.SyntaxError
	switch {
	case errors.As(err, &typeErr):
		if typeErr.Field == "" {
			return fmt.Sprintf("got a JSON %s, want %s", typeErr.Value, jsonKind(typeErr.Type.Kind().String()))
		}
		return fmt.Sprintf("field %q: got a JSON %s, want %s", typeErr.Field, typeErr.Value, jsonKind(typeErr.Type.Kind().String()))
	case errors.As(err, &syntaxErr):
		return fmt.Sprintf("malformed JSON at byte %d: %v", syntaxErr.Offset, syntaxErr)
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return "malformed JSON: the body ends early"
	}
	if f, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		return fmt.Sprintf("field %s is not in the schema", f)
	}
	return err.Error()
}

func jsonKind(goKind string) string {
	switch {
	case strings.HasPrefix(goKind, "int"), strings.HasPrefix(goKind, "uint"):
		return "an integer"
	case strings.HasPrefix(goKind, "float"):
		return "a number"
	case goKind == "string":
		return "a string"
	case goKind == "bool":
		return "a boolean"
	case goKind == "slice":
		return "an array"
	case goKind == "struct", goKind == "map", goKind == "ptr":
		return "an object"
	}
	return goKind
}
