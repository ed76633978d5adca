package controller

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// A replicated entry is one group commit's writes, in order: a version
// byte, the raft term whose memory made them (uvarint; version 2), the
// count, then per write its bucket, key and either a delete mark or the
// value, each length-prefixed (uvarint). Writes are absolute puts and
// deletes, so applying an entry twice leaves what applying it once does,
// and a replica may replay entries its store already holds.
//
// The term fences writes (storeFSM.Apply): a leader deposed and elected
// again reloads its memory from the store, but a group computed from its
// memory of before could still be appended in the new term, overwriting
// with whole records what another leader changed meanwhile. Every replica
// skips an entry whose term is not the term of the leader that appended
// it, alike, from the log alone.
const (
	entryVersionUnfenced = 1 // written before the term; applied as it stands
	entryVersion         = 2
)

const (
	opDelete = 0
	opPut    = 1
)

// errEntry is an entry that does not decode (never written by this code).
var errEntry = errors.New("controller: replicated entry")

func encodeWrites(term uint64, ws []write) []byte {
	size := 1 + 2*binary.MaxVarintLen64
	for _, w := range ws {
		size += 3*binary.MaxVarintLen64 + 1 + len(w.bucket) + len(w.key) + len(w.val)
	}
	b := make([]byte, 0, size)
	b = append(b, entryVersion)
	b = binary.AppendUvarint(b, term)
	b = binary.AppendUvarint(b, uint64(len(ws)))
	for _, w := range ws {
		b = appendField(appendField(b, w.bucket), w.key)
		if w.val == nil {
			b = append(b, opDelete)
			continue
		}
		b = appendField(append(b, opPut), w.val)
	}
	return b
}

func appendField(b, f []byte) []byte {
	return append(binary.AppendUvarint(b, uint64(len(f))), f...)
}

// anyTerm is the term decodeWrites gives an entry of version 1, which
// applies in whatever term it was appended.
const anyTerm = ^uint64(0)

// decodeWrites reads an entry: the term its writes were made in (anyTerm
// for an entry of version 1; 0 for writes of a controller that never
// served, which no term accepts) and the writes, which alias b.
func decodeWrites(b []byte) (uint64, []write, error) {
	if len(b) == 0 || (b[0] != entryVersion && b[0] != entryVersionUnfenced) {
		return 0, nil, fmt.Errorf("%w: unknown version (a newer controller wrote it?)", errEntry)
	}
	d := entryDecoder{b: b[1:]}
	term := anyTerm
	if b[0] == entryVersion {
		term = d.uvarint()
	}
	ws, err := d.writes()
	return term, ws, err
}

// writes reads the count and the writes.
func (d *entryDecoder) writes() ([]write, error) {
	n := d.uvarint()
	// Every write takes at least three bytes: a count beyond that is a
	// corrupt entry, not a reason to allocate.
	if d.err != nil || n > uint64(len(d.b))/3 {
		return nil, fmt.Errorf("%w: bad write count", errEntry)
	}
	ws := make([]write, 0, n)
	for range n {
		w := write{bucket: d.field(), key: d.field()}
		switch d.byte() {
		case opPut:
			w.val = d.field()
			if w.val == nil {
				w.val = []byte{}
			}
		case opDelete:
		default:
			d.fail("unknown write kind")
		}
		if d.err != nil {
			return nil, d.err
		}
		ws = append(ws, w)
	}
	if len(d.b) != 0 {
		return nil, fmt.Errorf("%w: %d bytes after the last write", errEntry, len(d.b))
	}
	return ws, nil
}

type entryDecoder struct {
	b   []byte
	err error
}

func (d *entryDecoder) fail(what string) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: %s", errEntry, what)
	}
}

func (d *entryDecoder) uvarint() uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail("truncated length")
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *entryDecoder) byte() byte {
	if d.err != nil || len(d.b) == 0 {
		d.fail("truncated write")
		return 0xff
	}
	c := d.b[0]
	d.b = d.b[1:]
	return c
}

func (d *entryDecoder) field() []byte {
	n := d.uvarint()
	if d.err != nil {
		return nil
	}
	if n > uint64(len(d.b)) {
		d.fail("field longer than the entry")
		return nil
	}
	f := d.b[:n:n]
	d.b = d.b[n:]
	return f
}
