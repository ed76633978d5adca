package store

import (
	"context"
	"database/sql"
	"fmt"
)

// migration is one step of the schema's history. Migrations are applied
// in version order, each in its own transaction together with its row in
// schema_version, so a crash leaves the schema at a whole version.
type migration struct {
	version int
	name    string
	stmts   []string
}

// migrations is the schema's history; append only, never edit a released
// step. Times are Unix seconds (0: unknown); begin_ts is eligible, else
// submit, else start; end_key is end, or the largest integer while the
// line has not ended, so "has not ended before T" is one range condition.
var migrations = []migration{
	{1, "jobs", []string{`
CREATE TABLE jobs (
	job_id        INTEGER NOT NULL,
	run           INTEGER NOT NULL,
	step          TEXT    NOT NULL,
	array_job_id  INTEGER NOT NULL DEFAULT 0,
	array_task_id INTEGER NOT NULL DEFAULT 0,
	name          TEXT    NOT NULL DEFAULT '',
	user          TEXT    NOT NULL,
	account       TEXT    NOT NULL DEFAULT '',
	partition     TEXT    NOT NULL DEFAULT '',
	qos           TEXT    NOT NULL DEFAULT '',
	submit        INTEGER NOT NULL DEFAULT 0,
	eligible      INTEGER NOT NULL DEFAULT 0,
	start         INTEGER NOT NULL DEFAULT 0,
	end           INTEGER NOT NULL DEFAULT 0,
	begin_ts      INTEGER NOT NULL DEFAULT 0,
	end_key       INTEGER NOT NULL,
	state         TEXT    NOT NULL,
	exit_code     INTEGER NOT NULL DEFAULT 0,
	exit_signal   INTEGER NOT NULL DEFAULT 0,
	nodelist      TEXT    NOT NULL DEFAULT '',
	nnodes        INTEGER NOT NULL DEFAULT 0,
	timelimit     INTEGER NOT NULL DEFAULT 0,
	req_tres      TEXT    NOT NULL DEFAULT '',
	alloc_tres    TEXT    NOT NULL DEFAULT '',
	PRIMARY KEY (job_id, run, step)
) WITHOUT ROWID`}},
	{2, "usage, GPUs and decisions", []string{
		`ALTER TABLE jobs ADD COLUMN cancelled_by TEXT NOT NULL DEFAULT ''`,
		`ALTER TABLE jobs ADD COLUMN gpu_uuids TEXT NOT NULL DEFAULT ''`,
		`ALTER TABLE jobs ADD COLUMN cpu_time_ms INTEGER NOT NULL DEFAULT 0`,
		`ALTER TABLE jobs ADD COLUMN max_rss_mib REAL NOT NULL DEFAULT 0`,
		`ALTER TABLE jobs ADD COLUMN gpu_util_mean REAL NOT NULL DEFAULT 0`,
		`ALTER TABLE jobs ADD COLUMN gpu_util_max REAL NOT NULL DEFAULT 0`,
		`ALTER TABLE jobs ADD COLUMN gpu_mem_max_mib REAL NOT NULL DEFAULT 0`,
		`ALTER TABLE jobs ADD COLUMN start_decision TEXT NOT NULL DEFAULT ''`,
		`ALTER TABLE jobs ADD COLUMN end_decision TEXT NOT NULL DEFAULT ''`,
	}},
	{3, "indexes for user and time queries", []string{
		`CREATE INDEX jobs_user_time ON jobs (user, end_key, begin_ts)`,
		`CREATE INDEX jobs_time ON jobs (end_key, begin_ts)`,
		`CREATE INDEX jobs_array ON jobs (array_job_id) WHERE array_job_id <> 0`,
	}},
	{4, "derived exit code", []string{
		`ALTER TABLE jobs ADD COLUMN derived_exit_code INTEGER NOT NULL DEFAULT 0`,
		`ALTER TABLE jobs ADD COLUMN derived_signal INTEGER NOT NULL DEFAULT 0`,
	}},
}

// latestVersion is the schema version this program writes.
func latestVersion() int { return migrations[len(migrations)-1].version }

const createVersionTable = `CREATE TABLE IF NOT EXISTS schema_version (
	version INTEGER PRIMARY KEY,
	name    TEXT NOT NULL,
	applied INTEGER NOT NULL DEFAULT (unixepoch())
)`

// schemaVersion reads the applied version (0 for an empty database).
func schemaVersion(ctx context.Context, db *sql.DB) (int, error) {
	var exists int
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE type='table' AND name='schema_version'`).Scan(&exists); err != nil {
		return 0, fmt.Errorf("store: read schema version: %w", err)
	}
	if exists == 0 {
		return 0, nil
	}
	var v int
	if err := db.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_version`).Scan(&v); err != nil {
		return 0, fmt.Errorf("store: read schema version: %w", err)
	}
	return v, nil
}

// migrate applies the steps of ms newer than the database's version.
func migrate(ctx context.Context, db *sql.DB, ms []migration) error {
	if _, err := db.ExecContext(ctx, createVersionTable); err != nil {
		return fmt.Errorf("store: create schema_version: %w", err)
	}
	current, err := schemaVersion(ctx, db)
	if err != nil {
		return err
	}
	if last := ms[len(ms)-1].version; current > last {
		return fmt.Errorf("%w: database at version %d, this program knows up to %d", ErrSchemaTooNew, current, last)
	}
	for _, m := range ms {
		if m.version <= current {
			continue
		}
		if err := applyMigration(ctx, db, m); err != nil {
			return err
		}
	}
	return nil
}

func applyMigration(ctx context.Context, db *sql.DB, m migration) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store: migration %d (%s): %w", m.version, m.name, err)
	}
	defer tx.Rollback() //nolint:errcheck // a no-op after Commit
	for _, s := range m.stmts {
		if _, err := tx.ExecContext(ctx, s); err != nil {
			return fmt.Errorf("store: migration %d (%s): %w", m.version, m.name, err)
		}
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO schema_version (version, name) VALUES (?, ?)`, m.version, m.name); err != nil {
		return fmt.Errorf("store: migration %d (%s): %w", m.version, m.name, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("store: migration %d (%s): %w", m.version, m.name, err)
	}
	return nil
}
