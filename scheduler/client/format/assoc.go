package format

import (
	"cmp"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
)

// Account is the account scontrol and squeue show for j. The controller
// keeps in the spec only what the cluster's associations decide: on a
// cluster without accounts (Slurm's accounting_storage/none) that is the
// account the user asked for, so a defaulted one is empty and shown as
// Slurm 22.05 shows it, (null); with accounts it is the resolved one.
// A job without a spec (an old record) shows what it is charged to.
func Account(j *pb.Job) string {
	if s := j.GetSpec(); s != nil {
		return textOrNull(s, "account", s.GetAccount())
	}
	return orNull(j.GetAccount())
}

// QOS is the QOS shown for j, by the same rule: a cluster that defines
// no QOS ignores --qos (as Slurm without accounting does) and shows
// (null); one that defines QOS shows the job's, "normal" by default.
func QOS(j *pb.Job) string {
	if s := j.GetSpec(); s != nil {
		return cmp.Or(s.GetQos(), "(null)")
	}
	return orNull(j.GetQos())
}
