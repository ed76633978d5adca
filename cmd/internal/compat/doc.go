// Package compat is the differential harness against Slurm 22.05: a
// generator of sbatch inputs (options in every spelling, directives in
// scripts, SBATCH_* variables, command-line overrides), a runner that
// submits each held to a side (the real Slurm through its commands, or
// Parity in this process), a normaliser for what differs by nature (job
// ids, times, the working directory) and a field-by-field comparison of
// what each side accepts and prints (scontrol show job -o, squeue -o).
// The corpus in testdata holds Slurm's recorded answers, so the
// comparison runs in go test without a Slurm.
package compat
