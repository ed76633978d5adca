package reports

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// SchemaVersion is the version of the JSON document WriteJSON produces
// (documented in SCHEMA.md). It changes only when a field changes meaning
// or disappears; added fields keep the version.
const SchemaVersion = 1

// ErrSchema reports a JSON document of a schema version this reader does
// not understand.
var ErrSchema = errors.New("reports: unsupported schema version")

// jsonDoc is the JSON document: the run's fields with the schema version
// alongside, so readers can check it before anything else.
type jsonDoc struct {
	SchemaVersion int `json:"schemaVersion"`
	*Run
}

// WriteJSON writes the run as an indented JSON document with
// "schemaVersion" first. The output is deterministic (map keys sorted).
func WriteJSON(w io.Writer, r *Run) error {
	if err := r.Validate(); err != nil {
		return err
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(jsonDoc{SchemaVersion: SchemaVersion, Run: r}); err != nil {
		return fmt.Errorf("reports: write json: %w", err)
	}
	return nil
}

// ReadJSON reads a document WriteJSON wrote and validates it. Unknown
// fields are allowed (newer writers may add some); an unknown schema
// version is not.
func ReadJSON(rd io.Reader) (*Run, error) {
	doc := jsonDoc{Run: &Run{}}
	if err := json.NewDecoder(rd).Decode(&doc); err != nil {
		return nil, fmt.Errorf("reports: read json: %w", err)
	}
	if doc.SchemaVersion != SchemaVersion {
		return nil, fmt.Errorf("%w: schemaVersion %d (this reader knows %d)", ErrSchema, doc.SchemaVersion, SchemaVersion)
	}
	if err := doc.Run.Validate(); err != nil {
		return nil, err
	}
	return doc.Run, nil
}
