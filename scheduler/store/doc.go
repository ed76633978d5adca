// Package store owns Parity's accounting ledger: one record per job run and
// per step, kept in an embedded SQLite database (modernc.org/sqlite, no
// cgo; WAL, ordered schema migrations, concurrent writers sharing
// transactions) behind the small Ledger interface a PostgreSQL
// implementation can later satisfy; and Spooled, which keeps
// every record through a database outage in a durable bbolt spool and
// writes it, in order, when the database returns. The meaning of records,
// filters and usage lives in scheduler/accounting; this package only stores
// and retrieves. It may import scheduler/accounting and the standard
// library; it must not import the controller, the agent or any vendor.
package store
