package controller

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	bolt "go.etcd.io/bbolt"

	"github.com/parityhpc/parity/scheduler/config"
	"github.com/parityhpc/parity/scheduler/core"
)

// Accounts (with their user associations) and QOS are cluster state as
// partitions are: cluster.yaml seeds them on the first start, after which
// the store's table is authoritative and sacctmgr changes it
// (acctadmin.go). The whole table is one record: an admin change is rare
// and a batch (sacctmgr add user with 10,000 names) is one write.
var (
	bucketAccounting = []byte("accounting")
	keyAcctTable     = []byte("table") // acctRecord (JSON)
)

// acctRecord is the accounting table's durable form.
type acctRecord struct {
	Accounts []config.Account `json:"accounts"`
	QOS      []config.QOS     `json:"qos"`
	// RootQOS is the root association's QOS list, which associations
	// without one inherit. The seed opens every QOS cluster.yaml defines;
	// a QOS added later is open only where sacctmgr grants it, as in
	// Slurm. A table stored before QOS lists (nil) opens every QOS.
	RootQOS []string `json:"rootQos,omitempty"`
	// AdminLevels are sacctmgr's AdminLevel= per user, each replacing
	// cluster.yaml's admins and operators for its user (acctlevel.go).
	AdminLevels map[string]string `json:"adminLevels,omitempty"`
}

// schedConfig is the core's configuration with the limits in force.
func (c *Controller) schedConfig() core.Config {
	cfg := c.coreCfg
	cfg.Limits = c.partitions.view().limits
	return cfg
}

// loadAccountingLocked reads the accounting table, seeding it from
// cluster.yaml when the store has none yet (c.mu held).
func (c *Controller) loadAccountingLocked() error {
	var rec *acctRecord
	var stored []byte
	err := c.store.db.View(func(tx *bolt.Tx) error {
		v := tx.Bucket(bucketAccounting).Get(keyAcctTable)
		if v == nil {
			return nil
		}
		stored = bytes.Clone(v)
		rec = &acctRecord{}
		return json.Unmarshal(v, rec)
	})
	if err != nil {
		return fmt.Errorf("%w: load accounting: %w", ErrStore, err)
	}
	if rec == nil {
		// Not seeded yet: cluster.yaml's table is in force in memory
		// until the serving controller commits it (seedAccounting).
		return c.setAccounting(seedRecord(c.cfg))
	}
	if rec.RootQOS == nil {
		rec.RootQOS = (&config.Cluster{QOS: rec.QOS}).QOSNames()
	}
	if err := c.setAccounting(rec); err != nil {
		return fmt.Errorf("%w: stored accounting: %w", ErrStore, err)
	}
	if file, _ := acctWrite(seedRecord(c.cfg)); !bytes.Equal(file.val, stored) {
		c.log.Warn("cluster.yaml's accounts or QOS differ from the stored ones, which stay in force; change them with sacctmgr",
			"stored_accounts", len(rec.Accounts), "file_accounts", len(c.cfg.Accounts))
	}
	return nil
}

// seedAccounting commits cluster.yaml's table when the store has none
// yet: as a lone controller starts, and as a replicated one begins to
// lead. It goes through the commit path, so with several controllers the
// leader's seed reaches every replica's store through raft (a follower
// writes none of its own: its file's accounts may differ, and the first
// leader's are the cluster's).
func (c *Controller) seedAccounting(ctx context.Context) error {
	return c.mutate(ctx, func() ([]write, func(), error) {
		has := false
		err := c.store.db.View(func(tx *bolt.Tx) error {
			has = tx.Bucket(bucketAccounting).Get(keyAcctTable) != nil
			return nil
		})
		if err != nil || has {
			return nil, nil, err
		}
		rec := seedRecord(c.cfg)
		w, err := acctWrite(rec)
		if err != nil {
			return nil, nil, err
		}
		if err := c.setAccounting(rec); err != nil {
			return nil, nil, fmt.Errorf("seed accounting: %w", err)
		}
		return []write{w}, nil, nil
	})
}

// seedRecord is cluster.yaml's accounting table: its accounts, QOS and
// root's QOS list.
func seedRecord(cfg *config.Cluster) *acctRecord {
	return &acctRecord{Accounts: cfg.Accounts, QOS: cfg.QOS, RootQOS: cfg.Root()}
}

// setAccounting puts rec in force (its limiter built first: a table the
// limiter refuses changes nothing).
func (c *Controller) setAccounting(rec *acctRecord) error {
	probe := config.Cluster{Accounts: rec.Accounts, QOS: rec.QOS}
	if err := probe.CheckAssocQOS(rec.RootQOS); err != nil {
		return err
	}
	limits, err := probe.BuildLimits()
	if err != nil {
		return err
	}
	admins, operators := effectiveStaff(c.cfg, rec.AdminLevels)
	c.partitions.setAccounting(rec, limits, admins, operators)
	return nil
}

func acctWrite(rec *acctRecord) (write, error) {
	v, err := json.Marshal(rec)
	if err != nil {
		return write{}, fmt.Errorf("encode accounting: %w", err)
	}
	return write{bucket: bucketAccounting, key: keyAcctTable, val: v}, nil
}
