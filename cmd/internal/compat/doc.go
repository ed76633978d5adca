// Package compat is the differential harness against Slurm 22.05: a
// generator of sbatch inputs (options in every spelling, directives in
// scripts, SBATCH_* variables, command-line overrides), a runner that
// submits each held to a side (the real Slurm through its commands, or
// Parity in this process), a normaliser for what differs by nature (job
// ids, times, the working directory) and a field-by-field comparison of
// what each side accepts and prints (scontrol show job -o, squeue -o).
// The corpus in testdata holds Slurm's recorded answers, so the
// comparison runs in go test without a Slurm; testdata/differences.txt
// documents the mismatches Parity keeps, each with why.
//
// The env cases (env.go) run jobs to their end instead: each job's batch
// step and one srun step inside it write the SLURM_* variables they see;
// testdata/envcorpus.jsonl holds the anchor's, and TestEnvCorpus runs
// them on a lab of the anchor's nodes and compares variable by variable.
package compat
