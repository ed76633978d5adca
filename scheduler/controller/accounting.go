package controller

import (
	"context"
	"strconv"
	"time"

	"github.com/parityhpc/parity/scheduler/accounting"
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
		c.sendLedger(c.ledgerRecord(j))
	}
}

// sendLedger queues one line for the ledger goroutine.
func (c *Controller) sendLedger(rec ledger.JobRecord) {
	if c.ledgerCh == nil {
		return
	}
	select {
	case c.ledgerCh <- rec:
	default:
		// Full: wait rather than drop; the writer keeps draining.
		c.ledgerCh <- rec
	}
}

// ledgerRecord converts a job run to its accounting line. c.mu held.
func (c *Controller) ledgerRecord(j *job) ledger.JobRecord {
	r := ledger.JobRecord{JobID: uint64(j.core.ID), Run: int(j.restarts), Name: j.core.Name, User: j.core.User,
		Account: j.core.Account, Partition: j.core.Partition, QOS: j.core.QOS, Submit: j.core.Submit, Eligible: j.core.Eligible,
		Start: j.core.Start, End: j.end, State: accounting.JobState(j.state), CancelledBy: j.cancelledBy,
		ExitCode: int(j.exitCode), ExitSignal: int(j.exitSignal), NNodes: len(j.core.Alloc), Timelimit: j.core.TimeLimit,
		ReqTRES: reqTRES(j), AllocTRES: c.allocTRESLocked(j), Usage: ledgerUsage(j.usage)}
	if j.state == StateCompleting {
		r.State = accounting.StateRunning
	}
	if j.startSeq != 0 {
		r.StartDecision = strconv.FormatUint(j.startSeq, 10)
	}
	if j.endSeq != 0 {
		r.EndDecision = strconv.FormatUint(j.endSeq, 10)
	}
	names := make([]string, 0, len(j.core.Alloc))
	for _, a := range j.core.Alloc {
		names = append(names, a.Node)
		r.GPUUUIDs = append(r.GPUUUIDs, a.Devices...)
	}
	r.NodeList = compressHosts(names)
	return r
}

// runLedger writes queued records in order until the queue is closed.
func (c *Controller) runLedger(l ledger.Ledger) {
	defer close(c.ledgerDone)
	for rec := range c.ledgerCh {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		if err := l.Record(ctx, rec); err != nil {
			c.log.Error("accounting record", "job", rec.JobID, "run", rec.Run, "state", rec.State, "err", err)
		}
		cancel()
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
