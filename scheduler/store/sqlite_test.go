package store

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/parityhpc/parity/scheduler/accounting"
)

func TestRecordRoundTrip(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, Options{})
	full := JobRecord{
		JobID: 42, ArrayJobID: 40, ArrayTaskID: 2, Run: 1, Name: "train llm", User: "Alice", Account: "Physics",
		Partition: "h100", QOS: "high", Submit: day0, Eligible: day0.Add(time.Minute), Start: day0.Add(2 * time.Minute),
		End: day0.Add(3 * time.Hour), State: accounting.StateCancelled, CancelledBy: "root", ExitCode: 0, ExitSignal: 9, DerivedExitCode: 7, DerivedSignal: 3,
		NodeList: "gpu[01-02]", NNodes: 2, Timelimit: 4 * time.Hour,
		ReqTRES:       tres(t, "billing=32,cpu=32,gres/gpu=8,mem=512G,node=2"),
		AllocTRES:     tres(t, "billing=32,cpu=32,gres/gpu=8,gres/gpu:h100=8,mem=512G,node=2"),
		GPUUUIDs:      []string{"GPU-1", "GPU-2"},
		Usage:         accounting.JobUsage{CPUTime: 90*time.Hour + 250*time.Millisecond, MaxRSSMiB: 1000.5, GPUUtilMean: 55.5, GPUUtilMax: 100, GPUMemMaxMiB: 80000},
		StartDecision: "d-1", EndDecision: "d-2",
	}
	if err := s.Record(ctx, full); err != nil {
		t.Fatal(err)
	}
	got, err := s.Query(ctx, Filter{})
	if err != nil || len(got) != 1 {
		t.Fatalf("Query = %v, %v", got, err)
	}
	want := full
	want.Normalize() // lower-cased user/account
	if want.User != "alice" || want.Account != "physics" {
		t.Fatalf("Normalize did not lower-case: %+v", want)
	}
	if !reflect.DeepEqual(got[0], want) {
		t.Fatalf("round trip:\n got %+v\nwant %+v", got[0], want)
	}
}

func TestRecordUpsertsByJobRunStep(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, Options{})
	start := job(7, "bob", "chem", day0, time.Time{}, "billing=4,cpu=4")
	end := start
	end.End, end.State = day0.Add(time.Hour), accounting.StateCompleted
	requeued := end
	requeued.Run, requeued.Start, requeued.End = 1, day0.Add(2*time.Hour), day0.Add(3*time.Hour)
	batch := end
	batch.Step = accounting.StepBatch
	for _, r := range []JobRecord{start, end, end, requeued, batch} {
		if err := s.Record(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	all, err := s.Query(ctx, Filter{Duplicates: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 3 {
		t.Fatalf("got %d lines, want run 0, its batch step and run 1: %+v", len(all), all)
	}
	if all[0].Run != 0 || all[0].State != accounting.StateCompleted || !all[0].End.Equal(end.End) {
		t.Errorf("run 0 = %+v, want the end record's values", all[0])
	}
	if all[1].Step != accounting.StepBatch || all[2].Run != 1 {
		t.Errorf("order = %s run %d, %s run %d", all[1].IDString(), all[1].Run, all[2].IDString(), all[2].Run)
	}
	latest, _ := s.Query(ctx, Filter{})
	if len(latest) != 1 || latest[0].Run != 1 {
		t.Errorf("without -D got %+v, want only run 1", latest)
	}
	spans, err := s.Usage(ctx, day0, day0.Add(24*time.Hour))
	if err != nil || len(spans) != 2 {
		t.Fatalf("Usage = %+v, %v; want one span per run, no steps", spans, err)
	}
}

func TestRecordRejectsInvalid(t *testing.T) {
	s := openTest(t, Options{})
	bad := job(1, "", "x", day0, day0.Add(time.Hour), "cpu=1")
	if err := s.Record(context.Background(), bad); !errors.Is(err, ErrInvalidRecord) {
		t.Fatalf("Record(no user) err = %v, want ErrInvalidRecord", err)
	}
	good := job(2, "a", "x", day0, day0.Add(time.Hour), "cpu=1")
	if err := s.RecordMany(context.Background(), []JobRecord{good, bad}); !errors.Is(err, ErrInvalidRecord) {
		t.Fatalf("RecordMany err = %v", err)
	}
	if got, _ := s.Query(context.Background(), Filter{}); len(got) != 0 {
		t.Fatalf("a failed batch wrote %d lines", len(got))
	}
}

// An older ledger (schema version 1, before usage columns and indexes) is
// migrated in place on open, keeping its rows.
func TestMigrateFromVersion1(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "old.db")
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	if err := migrate(ctx, db, migrations[:1]); err != nil {
		t.Fatal(err)
	}
	_, err = db.ExecContext(ctx, `INSERT INTO jobs (job_id, run, step, user, account, start, end, begin_ts, end_key, state, alloc_tres)
		VALUES (5, 0, '', 'carol', 'chem', ?, ?, ?, ?, 'COMPLETED', 'billing=2,cpu=2')`,
		day0.Unix(), day0.Add(time.Hour).Unix(), day0.Unix(), day0.Add(time.Hour).Unix())
	if err != nil {
		t.Fatal(err)
	}
	db.Close()

	if _, err := OpenSQLite(ctx, path, Options{ReadOnly: true}); !errors.Is(err, ErrNeedsMigrate) {
		t.Fatalf("read-only open of a v1 ledger err = %v, want ErrNeedsMigrate", err)
	}
	s, err := OpenSQLite(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	v, err := schemaVersion(ctx, s.w)
	if err != nil || v != latestVersion() {
		t.Fatalf("version after open = %d, %v", v, err)
	}
	got, err := s.Query(ctx, Filter{Users: []string{"carol"}})
	if err != nil || len(got) != 1 || got[0].AllocTRES[accounting.TRESBilling] != 2 || got[0].GPUUUIDs != nil || got[0].Usage.GPUUtilMax != 0 {
		t.Fatalf("migrated row = %+v, %v", got, err)
	}
	var idx int
	if err := s.r.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE type='index' AND name='jobs_user_time'`).Scan(&idx); err != nil || idx != 1 {
		t.Fatalf("user/time index missing: %d %v", idx, err)
	}
	// A new-style record lands next to it.
	if err := s.Record(ctx, job(6, "carol", "chem", day0, day0.Add(time.Hour), "cpu=1")); err != nil {
		t.Fatal(err)
	}
}

func TestSchemaTooNewAndReadOnly(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "l.db")
	if _, err := OpenSQLite(ctx, path, Options{ReadOnly: true}); !errors.Is(err, ErrNotFound) {
		t.Fatalf("read-only open of a missing file err = %v", err)
	}
	s, err := OpenSQLite(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Record(ctx, job(1, "a", "x", day0, day0.Add(time.Hour), "cpu=1")); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if err := s.Record(ctx, job(2, "a", "x", day0, day0.Add(time.Hour), "cpu=1")); !errors.Is(err, ErrClosed) {
		t.Fatalf("Record after Close err = %v", err)
	}

	ro, err := OpenSQLite(ctx, path, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := ro.Query(ctx, Filter{}); err != nil || len(got) != 1 {
		t.Fatalf("read-only Query = %v, %v", got, err)
	}
	if err := ro.Record(ctx, job(3, "a", "x", day0, day0.Add(time.Hour), "cpu=1")); err == nil {
		t.Fatal("Record on a read-only ledger succeeded")
	}
	ro.Close()

	db, _ := sql.Open("sqlite", "file:"+path)
	if _, err := db.ExecContext(ctx, `INSERT INTO schema_version (version, name) VALUES (99, 'future')`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if _, err := OpenSQLite(ctx, path, Options{}); !errors.Is(err, ErrSchemaTooNew) {
		t.Fatalf("open of a future schema err = %v, want ErrSchemaTooNew", err)
	}
}

func TestOptionsValidated(t *testing.T) {
	_, err := OpenSQLite(context.Background(), filepath.Join(t.TempDir(), "x.db"), Options{Synchronous: "sometimes"})
	if err == nil {
		t.Fatal("Synchronous=sometimes accepted")
	}
}
