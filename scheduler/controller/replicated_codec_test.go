package controller

import (
	"bytes"
	"errors"
	"log/slog"
	"testing"

	"github.com/hashicorp/raft"
	bolt "go.etcd.io/bbolt"
)

func TestReplicatedEntryRoundTrips(t *testing.T) {
	ws := []write{
		{bucket: bucketJobs, key: jobKey(7), val: []byte("record")},
		{bucket: bucketScripts, key: jobKey(7), val: []byte{}},
		{bucket: bucketMeta, key: keyNextID, val: u64(8)},
		{bucket: bucketJobs, key: jobKey(3)}, // a delete
	}
	term, got, err := decodeWrites(encodeWrites(42, ws))
	if err != nil || term != 42 {
		t.Fatalf("term %d, %v; want 42", term, err)
	}
	if len(got) != len(ws) {
		t.Fatalf("%d writes back, want %d", len(got), len(ws))
	}
	for i := range ws {
		if !bytes.Equal(got[i].bucket, ws[i].bucket) || !bytes.Equal(got[i].key, ws[i].key) ||
			!bytes.Equal(got[i].val, ws[i].val) || (got[i].val == nil) != (ws[i].val == nil) {
			t.Fatalf("write %d: %+v, want %+v (a put of an empty value must stay a put)", i, got[i], ws[i])
		}
	}
}

func TestCorruptEntriesAreRefused(t *testing.T) {
	good := encodeWrites(3, []write{{bucket: bucketJobs, key: jobKey(1), val: []byte("x")}})
	for name, b := range map[string][]byte{
		"empty":       nil,
		"new version": append([]byte{9}, good[1:]...),
		"truncated":   good[:len(good)-1],
		"trailing":    append(append([]byte(nil), good...), 0),
		"huge count":  {entryVersion, 3, 0xff, 0xff, 0xff, 0xff, 0x0f},
		"no term":     {entryVersion},
	} {
		if _, _, err := decodeWrites(b); !errors.Is(err, errEntry) {
			t.Errorf("%s: err = %v, want errEntry", name, err)
		}
	}
}

func FuzzDecodeWrites(f *testing.F) {
	f.Add(encodeWrites(7, []write{{bucket: bucketJobs, key: jobKey(1), val: []byte("x")}, {bucket: bucketJobs, key: jobKey(2)}}))
	f.Add([]byte{entryVersion, 5, 1, 0, 0, 2})
	f.Add([]byte{entryVersionUnfenced, 1, 0, 0, 2})
	f.Fuzz(func(t *testing.T, b []byte) {
		term, ws, err := decodeWrites(b)
		if err != nil {
			return
		}
		// What decodes survives encoding again, write for write.
		backTerm, back, err := decodeWrites(encodeWrites(term, ws))
		if err != nil || backTerm != term || len(back) != len(ws) {
			t.Fatalf("re-encoded writes of %x: %v, %d of %d", b, err, len(back), len(ws))
		}
		for i := range ws {
			if !bytes.Equal(back[i].key, ws[i].key) || !bytes.Equal(back[i].val, ws[i].val) || (back[i].val == nil) != (ws[i].val == nil) {
				t.Fatalf("write %d changed: %+v, was %+v", i, back[i], ws[i])
			}
		}
	})
}

// An entry written before entries carried their term (version 1) still
// applies, as made in no particular term.
func TestAnUnfencedEntryStillDecodes(t *testing.T) {
	v1 := append([]byte{entryVersionUnfenced}, encodeWrites(9, []write{{bucket: bucketJobs, key: jobKey(1), val: []byte("x")}})[2:]...)
	term, ws, err := decodeWrites(v1)
	if err != nil || term != anyTerm || len(ws) != 1 || string(ws[0].val) != "x" {
		t.Fatalf("version 1 entry: term %d, %v, %v", term, ws, err)
	}
}

// Every replica skips an entry whose writes were made from memory of an
// earlier term than the one it was appended in (a leader deposed and
// elected again), and its waiter is told; an entry of its own term, or of
// none (version 1), applies.
func TestAnEntryMadeInAnEarlierTermIsSkipped(t *testing.T) {
	s, err := openStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	f := &storeFSM{s: s, log: slog.New(slog.DiscardHandler)}
	put := func(v string) []write { return []write{{bucket: bucketMeta, key: []byte("k"), val: []byte(v)}} }
	stored := func() string {
		var v []byte
		s.db.View(func(tx *bolt.Tx) error { v = bytes.Clone(tx.Bucket(bucketMeta).Get([]byte("k"))); return nil })
		return string(v)
	}
	if r := f.Apply(&raft.Log{Type: raft.LogCommand, Term: 4, Data: encodeWrites(4, put("fresh"))}); r != nil {
		t.Fatalf("an entry of its own term: %v", r)
	}
	r := f.Apply(&raft.Log{Type: raft.LogCommand, Term: 6, Data: encodeWrites(4, put("stale"))})
	if err, _ := r.(error); !errors.Is(err, errStaleWrites) {
		t.Fatalf("an entry made in term 4, appended in term 6: %v, want errStaleWrites", r)
	}
	if got := stored(); got != "fresh" {
		t.Fatalf("the store holds %q after the stale entry, want it skipped", got)
	}
	if f.broken.Load() != nil {
		t.Fatal("a skipped stale entry broke the store")
	}
	// A controller that never served has no term: no leader takes its writes.
	if r := f.Apply(&raft.Log{Type: raft.LogCommand, Term: 6, Data: encodeWrites(0, put("unserved"))}); r == nil || stored() != "fresh" {
		t.Fatalf("writes of a controller that never served: %v, stored %q", r, stored())
	}
	v1 := append([]byte{entryVersionUnfenced}, encodeWrites(0, put("v1"))[2:]...)
	if r := f.Apply(&raft.Log{Type: raft.LogCommand, Term: 9, Data: v1}); r != nil || stored() != "v1" {
		t.Fatalf("a version 1 entry: %v, stored %q", r, stored())
	}
}
