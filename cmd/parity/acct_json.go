package main

import (
	"io"
	"time"

	"github.com/parityhpc/parity/scheduler/accounting"
	"github.com/parityhpc/parity/scheduler/api"
	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/rest"
	"github.com/parityhpc/parity/scheduler/rest/dataparser"
)

// acctJSONVersion is the one data parser sacct --json prints.
const acctJSONVersion = rest.DataParser

// writeAcctJSON prints sacct --json: v0.0.44_openapi_slurmdbd_jobs_resp,
// encoded by the code that answers GET /slurmdb/v0.0.44/jobs/, each
// allocation with its steps nested (recs sorted, as the ledger returns
// them: an allocation before its steps).
func writeAcctJSON(w io.Writer, recs []accounting.JobRecord, now func() time.Time) error {
	lines := make([]*pb.LedgerLine, len(recs))
	for i := range recs {
		lines[i] = api.LedgerLineToProto(&recs[i])
	}
	enc := dataparser.CLIEncoder{Version: version, Command: []string{"sacct", "--json"}, Now: now}
	return rest.AccountingJobsJSON(w, enc, lines, nil, now)
}
