package store

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Spool buckets: records waiting for the ledger, and records the ledger
// refused as invalid on replay (kept for an operator, never dropped).
var (
	bucketPending  = []byte("pending")
	bucketRejected = []byte("rejected")
)

// Spool is a durable FIFO of job records in a bbolt file: every Append is
// one fsync'd transaction, keys are increasing sequence numbers, so the
// order survives a crash. It is safe for concurrent use.
type Spool struct {
	db   *bolt.DB
	path string
}

// spooled is one record with its sequence number.
type spooled struct {
	seq uint64
	rec JobRecord
}

// OpenSpool opens or creates the spool at path. A spool is held by one
// process at a time; a second opener fails after a second.
func OpenSpool(path string) (*Spool, error) {
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		return nil, fmt.Errorf("store: open spool %s: %w", path, err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		for _, b := range [][]byte{bucketPending, bucketRejected} {
			if _, err := tx.CreateBucketIfNotExists(b); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("store: init spool %s: %w", path, err)
	}
	return &Spool{db: db, path: path}, nil
}

func seqKey(seq uint64) []byte { return binary.BigEndian.AppendUint64(nil, seq) }

// Append adds recs at the tail, all or none.
func (s *Spool) Append(recs ...JobRecord) error {
	err := s.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketPending)
		for i := range recs {
			data, err := json.Marshal(&recs[i])
			if err != nil {
				return err
			}
			seq, err := b.NextSequence()
			if err != nil {
				return err
			}
			if err := b.Put(seqKey(seq), data); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("store: spool %d records to %s: %w", len(recs), s.path, err)
	}
	return nil
}

// Peek returns up to n records from the head, oldest first.
func (s *Spool) Peek(n int) ([]spooled, error) {
	var out []spooled
	err := s.db.View(func(tx *bolt.Tx) error {
		c := tx.Bucket(bucketPending).Cursor()
		for k, v := c.First(); k != nil && len(out) < n; k, v = c.Next() {
			var r JobRecord
			if err := json.Unmarshal(v, &r); err != nil {
				return fmt.Errorf("record %d: %w", binary.BigEndian.Uint64(k), err)
			}
			out = append(out, spooled{seq: binary.BigEndian.Uint64(k), rec: r})
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("store: read spool %s: %w", s.path, err)
	}
	return out, nil
}

// Remove deletes the head records up to and including seq.
func (s *Spool) Remove(through uint64) error {
	err := s.db.Update(func(tx *bolt.Tx) error {
		c := tx.Bucket(bucketPending).Cursor()
		for k, _ := c.First(); k != nil && binary.BigEndian.Uint64(k) <= through; k, _ = c.First() {
			if err := c.Delete(); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("store: trim spool %s: %w", s.path, err)
	}
	return nil
}

// Reject moves the record at seq from the pending queue to the rejected
// bucket, where it stays for an operator.
func (s *Spool) Reject(seq uint64) error {
	err := s.db.Update(func(tx *bolt.Tx) error {
		p, r := tx.Bucket(bucketPending), tx.Bucket(bucketRejected)
		v := p.Get(seqKey(seq))
		if v == nil {
			return nil
		}
		if err := r.Put(seqKey(seq), append([]byte(nil), v...)); err != nil {
			return err
		}
		return p.Delete(seqKey(seq))
	})
	if err != nil {
		return fmt.Errorf("store: reject spooled record %d in %s: %w", seq, s.path, err)
	}
	return nil
}

// Len is the number of records waiting, and of those rejected.
func (s *Spool) Len() (pending, rejected int, err error) {
	err = s.db.View(func(tx *bolt.Tx) error {
		pending = tx.Bucket(bucketPending).Stats().KeyN
		rejected = tx.Bucket(bucketRejected).Stats().KeyN
		return nil
	})
	if err != nil {
		return 0, 0, fmt.Errorf("store: count spool %s: %w", s.path, err)
	}
	return pending, rejected, nil
}

// Close closes the spool file.
func (s *Spool) Close() error { return s.db.Close() }
