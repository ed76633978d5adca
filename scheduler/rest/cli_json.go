package rest

import (
	"io"
	"time"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/config"
	"github.com/parityhpc/parity/scheduler/rest/dataparser"
)

// AccountingJobsJSON writes sacct --json, v0.0.44_openapi_slurmdbd_jobs_resp,
// as GET /slurmdb/v0.0.44/jobs/ answers it: each allocation line with
// the steps that follow it (lines in ledger order, allocation first). cfg,
// when known, gives the TRES their slurmdbd ids (nil: a ledger read
// without the cluster file, ids unknown); now is running jobs' clock.
func AccountingJobsJSON(w io.Writer, enc dataparser.CLIEncoder, lines []*pb.LedgerLine, cfg *config.Cluster, now func() time.Time) error {
	if now == nil {
		now = time.Now
	}
	h := &Handler{b: Backend{ClusterName: enc.Cluster, Version: enc.Version, Now: now, Config: cfg}}
	g := h.newDBJobGrouper()
	g.add(lines)
	return enc.Write(w, g.out)
}
