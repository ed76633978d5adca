package core

type probe struct {
	job JobID
}

func (pr *probe) capture(p *pass, d *Decision, j *Job, pj pendingJob, bad []badRequest) {}
