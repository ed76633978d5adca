package controller

import (
	"maps"
	"slices"

	"google.golang.org/protobuf/encoding/protowire"
)

// JobSpec field numbers of the cold record (types.proto).
const (
	fieldScript protowire.Number = 42
	fieldEnv    protowire.Number = 43
	fieldArgv   protowire.Number = 50
)

// encodeCold encodes the script, environment and arguments as a JobSpec
// holding only those fields, which store.script decodes. It writes the
// wire format directly rather than filling a JobSpec (a large message) and
// marshalling it by reflection: this runs on every submission. Map
// entries go in key order, so the bytes are deterministic.
func encodeCold(script string, env map[string]string, argv []string) []byte {
	n := protowire.SizeTag(fieldScript) + protowire.SizeBytes(len(script))
	for k, v := range env {
		n += protowire.SizeTag(fieldEnv) + protowire.SizeBytes(envEntrySize(k, v))
	}
	for _, a := range argv {
		n += protowire.SizeTag(fieldArgv) + protowire.SizeBytes(len(a))
	}
	b := make([]byte, 0, n)
	if script != "" {
		b = protowire.AppendTag(b, fieldScript, protowire.BytesType)
		b = protowire.AppendString(b, script)
	}
	if len(env) > 0 {
		for _, k := range slices.Sorted(maps.Keys(env)) {
			v := env[k]
			b = protowire.AppendTag(b, fieldEnv, protowire.BytesType)
			b = protowire.AppendVarint(b, uint64(envEntrySize(k, v)))
			b = protowire.AppendTag(b, 1, protowire.BytesType)
			b = protowire.AppendString(b, k)
			b = protowire.AppendTag(b, 2, protowire.BytesType)
			b = protowire.AppendString(b, v)
		}
	}
	for _, a := range argv {
		b = protowire.AppendTag(b, fieldArgv, protowire.BytesType)
		b = protowire.AppendString(b, a)
	}
	return b
}

// envEntrySize is the encoded size of one map entry's body (key 1, value 2).
func envEntrySize(k, v string) int {
	return protowire.SizeTag(1) + protowire.SizeBytes(len(k)) + protowire.SizeTag(2) + protowire.SizeBytes(len(v))
}
