// Package accounting owns the meaning of Parity's ledger: job and step
// records, TRES strings (billing=4,cpu=4,gres/gpu=1,mem=400M,node=1), billing
// from per-partition TRESBillingWeights (sum, MAX_TRES, MAX_TRES_GRES),
// billed usage decayed with a half-life (and optional periodic reset) into
// the per-association map fair-share consumes, and the sacct, sreport and
// sshare vocabularies: field and time parsing, filters, default windows and
// table, parsable and JSON rendering. It is pure — no clock (time is an
// argument), no goroutines, no I/O beyond the io.Writer it renders to — so
// the command line and the controller format the same records the same way.
// It may import scheduler/policy, gres, topology and the standard library
// (plus YAML for account files); it must not import scheduler/store or any
// daemon, and it never names a vendor: a typed GPU is just a TRES name.
package accounting
