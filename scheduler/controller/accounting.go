package controller

import (
	"context"
	"strconv"
	"time"

	"github.com/parityhpc/parity/scheduler/accounting"
	"github.com/parityhpc/parity/scheduler/core"
	ledger "github.com/parityhpc/parity/scheduler/store"
)

// accountingQueue is how many ledger records may wait for the writer
// goroutine before recording blocks the controller (back-pressure, never loss).
const accountingQueue = 65536

// accountLocked queues a job's ledger line (at start, at end, and again
// for every job on restart: the ledger upserts by (job, run, step), so
// re-recording after a crash leaves one line). c.mu held.
func (c *Controller) accountLocked(j *job) {
	if c.ledgerCh != nil {
		c.sendLedger(batchOf(j).lines(c.ledgerRecord(j))...)
	}
}

// sendLedger queues lines for the ledger goroutine.
func (c *Controller) sendLedger(recs ...ledger.JobRecord) {
	if c.ledgerCh == nil {
		return
	}
	for _, rec := range recs {
		select {
		case c.ledgerCh <- rec:
		default:
			// Full: wait rather than drop; the writer keeps draining.
			c.ledgerCh <- rec
		}
	}
}

// batchPart is what a run's batch step line (sacct's JOBID.batch) takes
// from the job: the script ran on the first node, with that node's CPUs,
// memory and devices, and exited with the script's own status. Taken
// with the allocation line (c.mu held), written with it after the commit.
type batchPart struct {
	ok           bool // a batch job that started
	first        core.NodeAlloc
	exit, signal int
}

// batchOf is j's batch part; not ok for an interactive job or one that
// never started.
func batchOf(j *job) batchPart {
	if j.spec.GetInteractive() || len(j.Core.Alloc) == 0 {
		return batchPart{}
	}
	return batchPart{ok: true, first: j.Core.Alloc[0], exit: int(j.ExitCode), signal: int(j.ExitSignal)}
}

// lines are the allocation line and, for a batch job, its batch step's,
// as slurmdbd keeps them: the run's state, the script's exit status (the
// anchor's sacct: a cancelled job's allocation 0:0, its batch step
// CANCELLED 0:15, named by no one).
func (bp batchPart) lines(alloc ledger.JobRecord) []ledger.JobRecord {
	if !bp.ok || alloc.Step != "" {
		return []ledger.JobRecord{alloc}
	}
	// The line keeps the job's name, so sacct --name selects it with its
	// job (JobName prints "batch" for it).
	b := alloc
	b.Step, b.CancelledBy = accounting.StepBatch, ""
	b.ExitCode, b.ExitSignal = bp.exit, bp.signal
	b.DerivedExitCode, b.DerivedSignal = 0, 0
	b.NodeList, b.NNodes = bp.first.Node, 1
	b.AllocTRES = accounting.TRES{accounting.TRESNode: 1, accounting.TRESCPU: float64(bp.first.CPUs.Count())}
	if bp.first.MemoryMB > 0 {
		b.AllocTRES[accounting.TRESMem] = float64(bp.first.MemoryMB)
	}
	b.ReqTRES = b.AllocTRES
	b.GPUUUIDs = append([]string(nil), bp.first.Devices...)
	b.Usage, b.StartDecision, b.EndDecision = accounting.JobUsage{}, "", ""
	return []ledger.JobRecord{alloc, b}
}

// ledgerRecord converts a job run to its accounting line. c.mu held.
func (c *Controller) ledgerRecord(j *job) ledger.JobRecord {
	r := ledger.JobRecord{JobID: uint64(j.Core.ID), Run: int(j.Restarts), Name: j.Core.Name, User: j.Core.User,
		Account: j.Core.Account, Partition: j.Core.Partition, QOS: j.Core.QOS, Submit: j.Core.Submit, Eligible: j.Core.Eligible,
		Start: j.Core.Start, End: j.End, State: accounting.JobState(j.State), CancelledBy: j.CancelledBy,
		ExitCode: int(j.ExitCode), ExitSignal: int(j.ExitSignal), NNodes: len(j.Core.Alloc), Timelimit: j.Core.TimeLimit,
		ReqTRES: reqTRES(j), AllocTRES: c.allocTRESLocked(j), Usage: ledgerUsage(j.usage)}
	if j.State == StateCompleting {
		r.State = accounting.StateRunning
	}
	if r.State == accounting.StateCancelled {
		// A cancelled job's allocation line shows 0:0 (the signal is its
		// batch step's), as the anchor's sacct shows it.
		r.ExitCode, r.ExitSignal = 0, 0
	}
	if j.task != nil {
		// sacct names an array task by its array and index (12_3).
		r.ArrayJobID, r.ArrayTaskID = uint64(j.task.array), uint32(j.task.index)
	}
	r.DerivedExitCode, r.DerivedSignal = runDerivedExit(j)
	if j.startSeq != 0 {
		r.StartDecision = strconv.FormatUint(j.startSeq, 10)
	}
	if j.endSeq != 0 {
		r.EndDecision = strconv.FormatUint(j.endSeq, 10)
	}
	names := make([]string, 0, len(j.Core.Alloc))
	for _, a := range j.Core.Alloc {
		names = append(names, a.Node)
		r.GPUUUIDs = append(r.GPUUUIDs, a.Devices...)
	}
	r.NodeList = compressHosts(names)
	return r
}

// ledgerBatch is the most records one ledger transaction carries: a
// commit costs far more than a row, so a burst of job ends (an array
// finishing, a node failing) costs a few commits, not one per job.
const ledgerBatch = 1024

// runLedger writes queued records in order until the queue is closed:
// it waits for one, takes whatever else is already queued (up to
// ledgerBatch) and writes them together. Asked to (drainLedgerSoon), it
// drains a spooling ledger.
func (c *Controller) runLedger(l ledger.Ledger) {
	defer close(c.ledgerDone)
	batch := make([]ledger.JobRecord, 0, ledgerBatch)
	for {
		var rec ledger.JobRecord
		select {
		case r, ok := <-c.ledgerCh:
			if !ok {
				return
			}
			rec = r
		case <-c.ledgerDrain:
			c.drainLedger(l)
			continue
		}
		batch = append(batch[:0], rec)
	fill:
		for len(batch) < ledgerBatch {
			select {
			case r, ok := <-c.ledgerCh:
				if !ok {
					break fill
				}
				batch = append(batch, r)
			default:
				break fill
			}
		}
		c.writeLedger(l, batch)
	}
}

// ledgerDrainer is a ledger that keeps records through an outage
// (store.Spooled): they wait in its spool until a Drain writes them.
type ledgerDrainer interface {
	Pending() int
	Drain(ctx context.Context) (int, error)
}

// drainLedgerSoon asks the ledger goroutine to drain the spool; the
// maintenance pass calls it, so records spooled during an outage reach
// the ledger within one maintenance interval (at most 5 s) of its end
// instead of waiting for the next record. It never blocks.
func (c *Controller) drainLedgerSoon() {
	select {
	case c.ledgerDrain <- struct{}{}:
	default:
	}
}

// drainLedger writes what a spooling ledger holds; while the outage lasts
// the drain fails and the next maintenance pass asks again (the spool
// logs the outage and its end).
func (c *Controller) drainLedger(l ledger.Ledger) {
	d, ok := l.(ledgerDrainer)
	if !ok || d.Pending() == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if n, err := d.Drain(ctx); err != nil {
		c.log.Debug("accounting spool not drained yet", "written", n, "pending", d.Pending(), "err", err)
	}
}

// writeLedger writes recs in one transaction when the ledger can batch. A
// batch fails whole (one invalid record, a spool that cannot be written),
// so on failure each record is written on its own: the good ones land (or
// are spooled) and only the bad one is logged. Record is an upsert, so
// writing again what a failed batch may have half-done is safe.
func (c *Controller) writeLedger(l ledger.Ledger, recs []ledger.JobRecord) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if b, ok := l.(ledger.BatchRecorder); ok && len(recs) > 1 {
		err := b.RecordMany(ctx, recs)
		if err == nil {
			return
		}
		c.log.Warn("accounting batch failed; writing its records one by one", "records", len(recs), "err", err)
	}
	for _, rec := range recs {
		if err := l.Record(ctx, rec); err != nil {
			c.log.Error("accounting record", "job", rec.JobID, "run", rec.Run, "state", rec.State, "err", err)
		}
	}
}

// compressHosts renders node names as a hostlist ("n[1-3],c1") for the
// ledger; names without a numeric suffix are listed as they are.
func compressHosts(names []string) string {
	type run struct {
		prefix     string
		lo, hi     int
		width      int
		standalone string
	}
	var runs []run
	for _, n := range names {
		i := len(n)
		for i > 0 && n[i-1] >= '0' && n[i-1] <= '9' {
			i--
		}
		if i == len(n) {
			runs = append(runs, run{standalone: n})
			continue
		}
		v, _ := strconv.Atoi(n[i:])
		w := len(n) - i
		if k := len(runs) - 1; k >= 0 && runs[k].standalone == "" && runs[k].prefix == n[:i] && runs[k].width == w && runs[k].hi+1 == v {
			runs[k].hi = v
			continue
		}
		runs = append(runs, run{prefix: n[:i], lo: v, hi: v, width: w})
	}
	out := ""
	for i, r := range runs {
		if i > 0 {
			out += ","
		}
		switch {
		case r.standalone != "":
			out += r.standalone
		case r.lo == r.hi:
			out += r.prefix + pad(r.lo, r.width)
		default:
			out += r.prefix + "[" + pad(r.lo, r.width) + "-" + pad(r.hi, r.width) + "]"
		}
	}
	return out
}

func pad(v, width int) string {
	s := strconv.Itoa(v)
	for len(s) < width {
		s = "0" + s
	}
	return s
}
