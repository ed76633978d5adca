// Package workflow owns the job-workflow rules around the scheduling
// core, as pure functions and small value types: job arrays (the compact
// pending remainder of an array and the tasks split off from it, with
// per-task state, %N throttling, task ids such as 123_7, whole-array and
// per-task cancel, squeue's 123_[8-9999%50]), dependency resolution
// (after, afterany, afterok, afternotok, aftercorr, singleton, '?' and ','
// combinations, +time delays, never-satisfiable detection, submit-time
// validation), user and admin holds, requeue bookkeeping (restart counts,
// --no-requeue, requeue-hold, launch-failure holds), time-limit signal
// plans and --deadline expiry. It is pure: time is an argument, no
// goroutines, no I/O. It imports scheduler/core and scheduler/jobspec and
// the standard library only, never the controller, agent, store, client
// or vendor packages.
package workflow
