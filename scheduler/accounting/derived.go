package accounting

// DeriveExitCode is Slurm's DerivedExitCode of one run from its step
// lines: the highest exit status of its srun steps (the batch and extern
// steps and the allocation line are left out), compared as the wait
// status Slurm keeps (code<<8 | signal), so any non-zero exit code
// outranks a signal. Lines of other jobs or runs are the caller's to
// leave out.
func DeriveExitCode(lines []JobRecord) (code, signal int) {
	best := -1
	for i := range lines {
		r := &lines[i]
		switch r.Step {
		case "", StepBatch, StepExtern:
			continue
		}
		if status := r.ExitCode<<8 | r.ExitSignal&0x7f; status > best {
			best, code, signal = status, r.ExitCode, r.ExitSignal
		}
	}
	return code, signal
}
