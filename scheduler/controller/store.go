package controller

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	bolt "go.etcd.io/bbolt"
	"google.golang.org/protobuf/proto"

	"github.com/parityhpc/parity/gres"
	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/core"
	cstate "github.com/parityhpc/parity/scheduler/state"
)

// Buckets of the state file.
var (
	bucketMeta        = []byte("meta")
	bucketJobs        = []byte("jobs")    // id → pb.Job (no script, no env)
	bucketScripts     = []byte("scripts") // id → pb.JobSpec holding only script, env and argv
	bucketNodes       = []byte("nodes")   // name → nodeRecord (JSON)
	bucketEvents      = []byte("events")  // seq → pb.Event
	bucketEventsByJob = []byte("events-by-job")
	keyNextID         = []byte("next-job-id")
	keySchema         = []byte("schema")
	keyUsage          = []byte("fairshare-usage") // usageRecord (JSON)
)

// usageRecord is the fair-share usage as last charged, so a restart keeps
// every association's history instead of starting afresh.
type usageRecord struct {
	Charged time.Time          `json:"charged"`
	Usage   map[string]float64 `json:"usage"`
}

const schemaVersion = 1

// ErrStore wraps failures of the state file.
var ErrStore = errors.New("controller: state store")

// write is one key change of a commit: Val nil deletes.
type write struct {
	bucket, key, val []byte
}

// store is the durable copy of the state.
type store struct {
	db *bolt.DB
	// replicate, when set (several controllers), makes a commit durable
	// by replicating its writes (replicated.go): the FSM then applies them
	// here, on every controller, through apply.
	replicate func(entry []byte) error
	// failCommit, when set (tests), makes the next commits fail before
	// anything is written, to prove no waiter is acknowledged.
	failCommit func() error
	// failWrite, when set (tests), fails the writes of this store's disk
	// (a full disk, a lost directory) before anything is written, on a
	// follower too.
	failWrite atomic.Pointer[func() error]
	// file is the state file as opened: a write first checks that its
	// path still names it, since removing the state directory under an
	// open file goes unnoticed otherwise (writes go on to a deleted inode
	// and are lost at the next start).
	file os.FileInfo
}

func openStore(dir string) (*store, error) {
	path := filepath.Join(dir, "state.db")
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: 5 * time.Second, NoFreelistSync: true, FreelistType: bolt.FreelistMapType})
	if err != nil {
		return nil, fmt.Errorf("%w: open %s: %w", ErrStore, path, err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		for _, b := range [][]byte{bucketMeta, bucketJobs, bucketScripts, bucketNodes, bucketEvents, bucketEventsByJob, bucketReservations, bucketPartitions, bucketAccounting} {
			if _, err := tx.CreateBucketIfNotExists(b); err != nil {
				return err
			}
		}
		meta := tx.Bucket(bucketMeta)
		if v := meta.Get(keySchema); v != nil && binary.BigEndian.Uint64(v) > schemaVersion {
			return fmt.Errorf("schema %d is newer than this program's %d", binary.BigEndian.Uint64(v), schemaVersion)
		}
		return meta.Put(keySchema, u64(schemaVersion))
	})
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("%w: init %s: %w", ErrStore, path, err)
	}
	file, err := os.Stat(path)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("%w: %w", ErrStore, err)
	}
	return &store{db: db, file: file}, nil
}

// errStateGone says the state file was removed or replaced under the
// running controller.
var errStateGone = errors.New("the state directory was removed or its state file replaced under the running controller")

// present checks that the state file's path still names the open file.
func (s *store) present() error {
	path := s.db.Path()
	now, err := os.Stat(path)
	if err != nil || !os.SameFile(now, s.file) {
		return fmt.Errorf("%w: %s: %w (restore the directory, with cluster.key, and restart: the others send it a snapshot)", ErrStore, path, errStateGone)
	}
	return nil
}

func (s *store) close() error { return s.db.Close() }

// commit makes one group of changes durable: replicated to a quorum when
// there are several controllers, else written here.
func (s *store) commit(term uint64, ws []write) error {
	if s.failCommit != nil {
		if err := s.failCommit(); err != nil {
			return fmt.Errorf("%w: commit: %w", ErrStore, err)
		}
	}
	if s.replicate != nil {
		if err := s.replicate(encodeWrites(term, ws)); err != nil {
			return fmt.Errorf("%w: commit: %w", ErrStore, err)
		}
		return nil
	}
	return s.apply(ws)
}

// apply writes one group of changes in one transaction; bbolt fsyncs
// before Update returns, so success means durable.
func (s *store) apply(ws []write) error {
	if fail := s.failWrite.Load(); fail != nil {
		if err := (*fail)(); err != nil {
			return fmt.Errorf("%w: commit: %w", ErrStore, err)
		}
	}
	if err := s.present(); err != nil {
		return err
	}
	err := s.db.Update(func(tx *bolt.Tx) error {
		var b *bolt.Bucket
		var last []byte
		for _, w := range ws {
			if b == nil || string(last) != string(w.bucket) {
				b, last = tx.Bucket(w.bucket), w.bucket
			}
			var err error
			if w.val == nil {
				err = b.Delete(w.key)
			} else {
				err = b.Put(w.key, w.val)
			}
			if err != nil {
				return fmt.Errorf("bucket %s key %x: %w", w.bucket, w.key, err)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("%w: commit: %w", ErrStore, err)
	}
	return nil
}

func u64(v uint64) []byte {
	b := make([]byte, 8)
	binary.BigEndian.PutUint64(b, v)
	return b
}

func jobKey(id core.JobID) []byte { return u64(uint64(id)) }

// nodeRecord is the durable part of a node: its admin state and last inventory.
type nodeRecord struct {
	Drain      bool              `json:"drain,omitempty"`
	Down       bool              `json:"down,omitempty"`
	Reason     string            `json:"reason,omitempty"`
	ReasonUser string            `json:"reasonUser,omitempty"`
	ReasonTime time.Time         `json:"reasonTime,omitzero"`
	GPUDrain   map[string]string `json:"gpuDrain,omitempty"`
	GPUDrainBy map[string]string `json:"gpuDrainBy,omitempty"`
	Exempt     map[string]bool   `json:"healthExempt,omitempty"`
	Inventory  *gres.Inventory   `json:"inventory,omitempty"`
	// Repartition is a GPU's re-partitioning in flight (repartition.go).
	Repartition *repartition `json:"repartition,omitempty"`
}

func (n *node) write() (write, error) {
	b, err := json.Marshal(nodeRecord{Drain: n.Drain, Down: n.Down, Reason: n.Reason, ReasonUser: n.ReasonUser,
		ReasonTime: n.ReasonTime, GPUDrain: n.GPUDrain, GPUDrainBy: n.GPUDrainBy, Exempt: n.Exempt, Inventory: n.Inventory,
		Repartition: n.repartition})
	if err != nil {
		return write{}, fmt.Errorf("controller: encode node %s: %w", n.name, err)
	}
	return write{bucket: bucketNodes, key: []byte(n.name), val: b}, nil
}

// script loads a job's script, environment and arguments.
func (s *store) script(id core.JobID) (*pb.JobSpec, error) {
	var out pb.JobSpec
	err := s.db.View(func(tx *bolt.Tx) error {
		v := tx.Bucket(bucketScripts).Get(jobKey(id))
		if v == nil {
			return nil
		}
		return proto.Unmarshal(v, &out)
	})
	if err != nil {
		return nil, fmt.Errorf("%w: script of job %d: %w", ErrStore, id, err)
	}
	return &out, nil
}

// load reads the whole durable state: the fair-share ledger and the
// nodes (with their inventories) before the jobs, whose runs are charged
// rate(job) a second from the ledger's last accrual.
func (s *store) load(st *state, nodes func(name string) *node, rate func(*job) float64) error {
	return s.db.View(func(tx *bolt.Tx) error {
		if v := tx.Bucket(bucketMeta).Get(keyNextID); v != nil {
			st.m.RestoreNextID(core.JobID(binary.BigEndian.Uint64(v)))
		}
		if v := tx.Bucket(bucketMeta).Get(keyUsage); v != nil {
			var rec usageRecord
			if err := json.Unmarshal(v, &rec); err != nil {
				return fmt.Errorf("fair-share usage: %w", err)
			}
			st.m.RestoreUsage(rec.Charged, rec.Usage)
		}
		err := tx.Bucket(bucketNodes).ForEach(func(k, v []byte) error {
			n := nodes(string(k))
			if n == nil {
				return nil // no longer configured
			}
			var rec nodeRecord
			if err := json.Unmarshal(v, &rec); err != nil {
				return fmt.Errorf("node %s: %w", k, err)
			}
			if err := st.m.RestoreNode(cstate.Node{Name: n.name, Drain: rec.Drain, Down: rec.Down, Reason: rec.Reason, ReasonUser: rec.ReasonUser,
				ReasonTime: rec.ReasonTime, GPUDrain: rec.GPUDrain, GPUDrainBy: rec.GPUDrainBy, Exempt: rec.Exempt, Inventory: rec.Inventory}); err != nil {
				return err
			}
			// An unusable inventory was logged when it was registered.
			_ = n.deriveShape()
			n.repartition = rec.Repartition
			return nil
		})
		if err != nil {
			return err
		}
		err = tx.Bucket(bucketJobs).ForEach(func(k, v []byte) error {
			var rec pb.Job
			if err := proto.Unmarshal(v, &rec); err != nil {
				return fmt.Errorf("job %x: %w", k, err)
			}
			j, err := jobFromRecord(&rec)
			if err != nil {
				return fmt.Errorf("job %d: %w", rec.GetId(), err)
			}
			if cstate.Holding(j.State) {
				j.Charge = rate(j) // before Restore, which charges a running job
			}
			return st.m.Restore(j)
		})
		if err != nil {
			return err
		}
		err = tx.Bucket(bucketReservations).ForEach(func(k, v []byte) error {
			r, err := reservationFromRecord(v)
			if err != nil {
				return fmt.Errorf("reservation %s: %w", k, err)
			}
			st.resv[r.core.Name] = r
			return nil
		})
		if err != nil {
			return err
		}
		if k, _ := tx.Bucket(bucketEvents).Cursor().Last(); k != nil {
			st.nextSeq = binary.BigEndian.Uint64(k) + 1
		}
		return nil
	})
}
