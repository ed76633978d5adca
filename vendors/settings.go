package vendors

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
)

// ErrSettings wraps every error DecodeSettings returns.
var ErrSettings = errors.New("vendors: invalid driver settings")

// DecodeSettings decodes a driver's settings block into v (a pointer to
// the driver's settings struct). An empty or null block leaves v as it
// is, so v carries the defaults. Unknown fields are refused: a typo in a
// site's configuration must not pass silently. Errors wrap ErrSettings
// and name the driver and the field.
func DecodeSettings(driver string, raw json.RawMessage, v any) error {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	if err == nil {
		if _, extra := dec.Token(); !errors.Is(extra, io.EOF) {
			err = errors.New("more than one value")
		}
	}
	if err == nil {
		return nil
	}
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &typ) && typ.Field != "":
		return fmt.Errorf("%w: driver %s: field %s: got a %s, want %s", ErrSettings, driver, typ.Field, typ.Value, typ.Type)
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		return fmt.Errorf("%w: driver %s: %s", ErrSettings, driver, strings.TrimPrefix(err.Error(), "json: "))
	}
	return fmt.Errorf("%w: driver %s: %w", ErrSettings, driver, err)
}

// SettingsDuration parses a duration field of a driver's settings ("30s",
// "1m30s"); "" gives def. Errors wrap ErrSettings and name the driver,
// the field and the value.
func SettingsDuration(driver, field, value string, def time.Duration) (time.Duration, error) {
	if value == "" {
		return def, nil
	}
	v, err := time.ParseDuration(value)
	if err != nil {
		return 0, fmt.Errorf("%w: driver %s: field %s: %q is not a duration such as \"30s\"", ErrSettings, driver, field, value)
	}
	if v <= 0 {
		return 0, fmt.Errorf("%w: driver %s: field %s: %q must be positive", ErrSettings, driver, field, value)
	}
	return v, nil
}
