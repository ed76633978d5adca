// Package bench measures the same workloads, in one run, on a Parity lab
// (labs/cluster: a real controller and agents over simulated H100 nodes,
// real job launch) and on a real Slurm, and tabulates the figures and
// their ratios: individual submissions as separate CLI processes, a large
// 1-GPU array from submit to last completion, a mixed GPU backlog drained
// after a blocker lets go, and the scheduler's pass time at that depth.
// Both sides are driven the same way, through their submit command
// (`parity submit` / sbatch) with identical sbatch options. It may import
// labs/cluster, labs/labfile and scheduler/client; nothing below labs
// imports it.
package bench
