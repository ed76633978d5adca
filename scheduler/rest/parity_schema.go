package rest

import (
	"fmt"
	"reflect"
	"strings"
)

// schemaOf is the OpenAPI schema of a Parity response type, derived from
// its Go type by reflection so that the document Parity serves for its
// own paths is the encoder's own shape and cannot drift from it. A field
// without omitempty is required; an object admits no other property.
// The envelope's fields and the no_val numbers refer to Slurm's own
// components, so Parity's answers read as slurmrestd's do.
func schemaOf(t reflect.Type) map[string]any {
	if ref, ok := schemaRefs()[t]; ok {
		return map[string]any{"$ref": "#/components/schemas/" + ref}
	}
	switch t.Kind() {
	case reflect.Pointer:
		return schemaOf(t.Elem())
	case reflect.String:
		return map[string]any{"type": "string"}
	case reflect.Bool:
		return map[string]any{"type": "boolean"}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return map[string]any{"type": "integer", "format": intFormat(t)}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return map[string]any{"type": "integer", "format": intFormat(t), "minimum": 0}
	case reflect.Float32, reflect.Float64:
		return map[string]any{"type": "number", "format": "double"}
	case reflect.Slice:
		return map[string]any{"type": "array", "items": schemaOf(t.Elem())}
	case reflect.Map:
		return map[string]any{"type": "object", "additionalProperties": schemaOf(t.Elem())}
	case reflect.Struct:
		props, required := map[string]any{}, []string{}
		structProps(t, props, &required)
		return map[string]any{"type": "object", "properties": props, "required": required, "additionalProperties": false}
	}
	panic(fmt.Sprintf("rest: no OpenAPI schema for Go type %v", t)) // a programming error, caught by the document's test
}

// structProps adds t's JSON fields; an embedded struct's fields are the
// outer object's, as encoding/json encodes them.
func structProps(t reflect.Type, props map[string]any, required *[]string) {
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Anonymous {
			structProps(f.Type, props, required)
			continue
		}
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" || !f.IsExported() {
			continue
		}
		s := schemaOf(f.Type)
		if d := f.Tag.Get("doc"); d != "" {
			if _, isRef := s["$ref"]; isRef {
				s = map[string]any{"allOf": []any{s}, "description": d}
			} else {
				s["description"] = d
			}
		}
		props[name] = s
		if !strings.Contains(opts, "omitempty") {
			*required = append(*required, name)
		}
	}
}

func intFormat(t reflect.Type) string {
	if t.Bits() <= 32 {
		return "int32"
	}
	return "int64"
}

// schemaRefs are the Go types whose schema is one of Slurm's components.
func schemaRefs() map[reflect.Type]string {
	return map[reflect.Type]string{
		reflect.TypeFor[meta]():      "v0.0.44_openapi_meta",
		reflect.TypeFor[[]apiErr]():  "v0.0.44_openapi_errors",
		reflect.TypeFor[[]warning](): "v0.0.44_openapi_warnings",
		reflect.TypeFor[noVal]():     "v0.0.44_uint64_no_val_struct",
		reflect.TypeFor[noValF]():    "v0.0.44_float64_no_val_struct",
	}
}
