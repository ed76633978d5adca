package jobspec

// Options sbatch 22.05 keeps in one field of the job, so the last one
// given decides, and options it keeps as two flags, so both given stay.

// applyKillOnInvalidDep is --kill-on-invalid-dep=yes|no. sbatch 22.05
// sets a flag per answer and never clears the other, so yes and no both
// given (in any order, anywhere) leave both set; the last one given is
// what Parity acts on.
func applyKillOnInvalidDep(b *builder, s setting) error {
	was, wasGiven := b.req.KillOnInvalidDep, b.req.Explicit("killOnInvalidDep")
	if err := applyYesNo(func(r *Request, v bool) { r.KillOnInvalidDep = v })(b, s); err != nil {
		return err
	}
	if wasGiven && was != b.req.KillOnInvalidDep {
		b.req.KillOnInvalidDepBoth = true
	}
	return nil
}

// applyOversubscribe is --oversubscribe. sbatch keeps it and
// --exclusive in one field, so the later of the two decides: the anchor
// printed OverSubscribe=NO for a script's --oversubscribe under a
// command line's --exclusive, YES the other way round.
func applyOversubscribe(b *builder, _ setting) error {
	b.req.Oversubscribe = true
	if b.req.Exclusive == ExclusiveNode {
		b.req.Exclusive = ""
	}
	return nil
}
