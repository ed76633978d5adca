// Package scheduler is the home of Parity's workload manager; the code lives
// in its sub-packages. core (pure: Schedule(snapshot, config, now) Plan and
// Explain) decides placement, priority order, backfill reservations, pending
// reasons and expected starts; policy (pure) holds the priority and
// fair-share arithmetic core calls. The daemons' packages (controller, the
// slurmctld-like daemon; agent, the node daemon; store, api, client and
// their helpers) sit above them and apply plans. core and policy import only gres, topology and
// the standard library; nothing below the daemons imports them back.
package scheduler
