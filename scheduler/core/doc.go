// Package core is Parity's pure scheduling core: Schedule(snapshot, config,
// now) turns cluster state (partitions, nodes with their GRES shape, running
// and pending jobs, associations and usage) into a Plan — jobs to start with
// their nodes, device UUIDs, CPUs and memory; reservations for blocked jobs;
// running jobs to preempt for higher-class ones (by QOS or partition tier);
// and for every pending job a Slurm pending reason, an expected start time
// and the decision record that explains it. A job may list several
// partitions (sbatch -p a,b): it starts in the first with room, else is
// reserved in the one where it can start earliest. Admin reservations (whole
// nodes or TRES amounts, MAINT, IGNORE_JOBS) are validated and placed by
// CheckReservation and PlaceReservation, and QOS/association limits from
// scheduler/policy plug in through PolicyLimiter. Explain answers "why is my job
// pending?" for one job. Priorities come from scheduler/policy; node
// selection is a chain of small filters and scorers whose reason constants
// make "why not here" data. The package has no goroutines, no clock (time is
// an argument), no I/O and no unseeded randomness, so the controller and
// trace replays in labs run the very same function. It imports only gres,
// topology, scheduler/policy and the standard library — never vendors, labs,
// the controller, agent, store, client or healthcheck.
package core
