package controller

import (
	"bytes"
	"errors"
	"testing"
)

func TestReplicatedEntryRoundTrips(t *testing.T) {
	ws := []write{
		{bucket: bucketJobs, key: jobKey(7), val: []byte("record")},
		{bucket: bucketScripts, key: jobKey(7), val: []byte{}},
		{bucket: bucketMeta, key: keyNextID, val: u64(8)},
		{bucket: bucketJobs, key: jobKey(3)}, // a delete
	}
	got, err := decodeWrites(encodeWrites(ws))
	if err != nil {
		t.Fatal(err)
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
	good := encodeWrites([]write{{bucket: bucketJobs, key: jobKey(1), val: []byte("x")}})
	for name, b := range map[string][]byte{
		"empty":       nil,
		"new version": append([]byte{9}, good[1:]...),
		"truncated":   good[:len(good)-1],
		"trailing":    append(append([]byte(nil), good...), 0),
		"huge count":  {entryVersion, 0xff, 0xff, 0xff, 0xff, 0x0f},
	} {
		if _, err := decodeWrites(b); !errors.Is(err, errEntry) {
			t.Errorf("%s: err = %v, want errEntry", name, err)
		}
	}
}

func FuzzDecodeWrites(f *testing.F) {
	f.Add(encodeWrites([]write{{bucket: bucketJobs, key: jobKey(1), val: []byte("x")}, {bucket: bucketJobs, key: jobKey(2)}}))
	f.Add([]byte{entryVersion, 1, 0, 0, 2})
	f.Fuzz(func(t *testing.T, b []byte) {
		ws, err := decodeWrites(b)
		if err != nil {
			return
		}
		// What decodes survives encoding again, write for write.
		back, err := decodeWrites(encodeWrites(ws))
		if err != nil || len(back) != len(ws) {
			t.Fatalf("re-encoded writes of %x: %v, %d of %d", b, err, len(back), len(ws))
		}
		for i := range ws {
			if !bytes.Equal(back[i].key, ws[i].key) || !bytes.Equal(back[i].val, ws[i].val) || (back[i].val == nil) != (ws[i].val == nil) {
				t.Fatalf("write %d changed: %+v, was %+v", i, back[i], ws[i])
			}
		}
	})
}
