package controller

import (
	"encoding/json"
	"fmt"
	"slices"
	"sync/atomic"

	bolt "go.etcd.io/bbolt"

	"github.com/parityhpc/parity/scheduler/config"
	"github.com/parityhpc/parity/scheduler/core"
	"github.com/parityhpc/parity/scheduler/policy"
)

// Partitions are cluster state: cluster.yaml seeds them on the first
// start, after which the store's table is authoritative and scontrol
// create|update|delete PartitionName=... changes it (partadmin.go).
var (
	bucketPartitions = []byte("partitions") // name → partRecord (JSON)
	// keyPartsSeeded marks the table seeded (no partition name starts
	// with a NUL byte).
	keyPartsSeeded = []byte("\x00seeded")
)

// partRecord is one partition's durable form; Seq keeps the order
// partitions are listed in (the file's, then creation's).
type partRecord struct {
	Seq       int              `json:"seq"`
	Partition config.Partition `json:"partition"`
}

// partTable is the partitions in force. It is read without c.mu (a
// submit's defaults, the listings) through one atomic pointer, so a
// reader sees one whole table; it changes only in the commit path (c.mu
// held).
type partTable struct {
	cur atomic.Pointer[partView]
}

// partView is one table: the cluster configuration with these
// partitions, accounts and QOS (so code written against config.Cluster
// reads them through it) and their forms for the scheduling core.
type partView struct {
	cfg  *config.Cluster
	core []core.Partition
	// assocs, qos and limits are the accounting state's (accttable.go).
	assocs []policy.Association
	// tree is assocs' account tree, built once per accounting change for
	// every pass (nil when assocs do not form one: the pass says why).
	tree   *policy.AccountTree
	qos    []core.QOS
	limits []core.Limiter
	// users is each user's default account, assoc the user associations
	// ("account/user"): a submission's account check in O(1) however
	// large the table.
	users map[string]string
	assoc map[string]struct{}
	// grants is each association's allowed and default QOS ("account"
	// and "account/user"), for the submit check.
	grants map[string]config.QOSGrant
	// levels are sacctmgr's run-time AdminLevel= per user.
	levels map[string]string
}

// userIndex builds partView's users and assoc from the accounts.
func userIndex(accounts []config.Account) (map[string]string, map[string]struct{}) {
	users, assoc := map[string]string{}, map[string]struct{}{}
	for _, a := range accounts {
		for _, u := range a.Users {
			if _, ok := users[u.Name]; !ok || u.Default {
				users[u.Name] = a.Name
			}
			assoc[a.Name+"/"+u.Name] = struct{}{}
		}
	}
	return users, assoc
}

func newPartTable(cfg *config.Cluster) *partTable {
	t := &partTable{}
	users, assoc := userIndex(cfg.Accounts)
	assocs := cfg.Associations()
	t.cur.Store(&partView{cfg: cfg, core: cfg.CorePartitions(), assocs: assocs, tree: treeOf(assocs), qos: cfg.CoreQOS(),
		limits: cfg.CoreConfig().Limits, users: users, assoc: assoc, grants: cfg.AssocQOS(cfg.RootQOS)})
	return t
}

// set puts list in force over base (the configuration as loaded),
// keeping the accounting state in force.
func (t *partTable) set(base *config.Cluster, list []config.Partition) {
	cur := t.cur.Load()
	v := *base
	v.Accounts, v.QOS, v.Limits, v.RootQOS = cur.cfg.Accounts, cur.cfg.QOS, cur.cfg.Limits, cur.cfg.RootQOS
	v.Admins, v.Operators = cur.cfg.Admins, cur.cfg.Operators
	v.Partitions = slices.Clone(list)
	t.cur.Store(&partView{cfg: &v, core: v.CorePartitions(), assocs: cur.assocs, tree: cur.tree, qos: cur.qos, limits: cur.limits,
		users: cur.users, assoc: cur.assoc, grants: cur.grants, levels: cur.levels})
}

// setAccounting puts the accounting table (and the limiter built from
// it, and the admins and operators in force) in force, keeping the
// partitions.
func (t *partTable) setAccounting(rec *acctRecord, limits *policy.Limits, admins, operators []string) {
	cur := t.cur.Load()
	v := *cur.cfg
	v.Admins, v.Operators = admins, operators
	accounts := rec.Accounts
	v.Accounts, v.QOS, v.Limits, v.RootQOS = accounts, rec.QOS, limits, rec.RootQOS
	var lim []core.Limiter
	if limits != nil {
		lim = []core.Limiter{core.PolicyLimiter(limits)}
	}
	users, assoc := userIndex(accounts)
	assocs := v.Associations()
	t.cur.Store(&partView{cfg: &v, core: cur.core, assocs: assocs, tree: treeOf(assocs), qos: v.CoreQOS(), limits: lim, users: users, assoc: assoc,
		grants: v.AssocQOS(rec.RootQOS), levels: rec.AdminLevels})
}

func (t *partTable) view() *partView { return t.cur.Load() }

// treeOf is assocs' account tree, or nil when they do not form one (the
// pass then builds it itself and warns why fair share is off).
func treeOf(assocs []policy.Association) *policy.AccountTree {
	if len(assocs) == 0 {
		return nil
	}
	tree, err := policy.NewAccountTree(assocs)
	if err != nil {
		return nil
	}
	return tree
}

func (t *partTable) get() (*config.Cluster, []core.Partition) {
	v := t.cur.Load()
	return v.cfg, v.core
}

// pcfg is the configuration with the partitions in force.
func (c *Controller) pcfg() *config.Cluster { v, _ := c.partitions.get(); return v }

// loadPartitionsLocked reads the partition table, seeding it from
// cluster.yaml when the store has none yet (c.mu held).
func (c *Controller) loadPartitionsLocked() error {
	var recs []partRecord
	seeded := false
	err := c.store.db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketPartitions)
		seeded = b.Get(keyPartsSeeded) != nil
		return b.ForEach(func(k, v []byte) error {
			if k[0] == 0 {
				return nil
			}
			var r partRecord
			if err := json.Unmarshal(v, &r); err != nil {
				return fmt.Errorf("partition %s: %w", k, err)
			}
			recs = append(recs, r)
			return nil
		})
	})
	if err != nil {
		return fmt.Errorf("%w: load partitions: %w", ErrStore, err)
	}
	if !seeded {
		return c.seedPartitions()
	}
	slices.SortFunc(recs, func(a, b partRecord) int { return a.Seq - b.Seq })
	list := make([]config.Partition, len(recs))
	for i, r := range recs {
		list[i] = r.Partition
	}
	c.partitions.set(c.cfg, list)
	if !samePartitions(list, c.cfg.Partitions) {
		c.log.Warn("cluster.yaml's partitions differ from the stored ones, which stay in force; change them with scontrol create|update|delete PartitionName=...",
			"stored", len(list), "file", len(c.cfg.Partitions))
	}
	return nil
}

// samePartitions reports whether two tables say the same (order aside).
func samePartitions(a, b []config.Partition) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		j := slices.IndexFunc(b, func(p config.Partition) bool { return p.Name == a[i].Name })
		if j < 0 || !partitionSame(&a[i], &b[j]) {
			return false
		}
	}
	return true
}

// seedPartitions writes cluster.yaml's partitions as the first table.
func (c *Controller) seedPartitions() error {
	err := c.store.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketPartitions)
		for i, p := range c.cfg.Partitions {
			v, err := json.Marshal(partRecord{Seq: i, Partition: p})
			if err != nil {
				return err
			}
			if err := b.Put([]byte(p.Name), v); err != nil {
				return err
			}
		}
		return b.Put(keyPartsSeeded, []byte{1})
	})
	if err != nil {
		return fmt.Errorf("%w: seed partitions: %w", ErrStore, err)
	}
	c.partitions.set(c.cfg, c.cfg.Partitions)
	return nil
}
