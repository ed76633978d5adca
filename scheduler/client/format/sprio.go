package format

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
)

// SprioOptions control Sprio.
type SprioOptions struct {
	NoHeader bool
	// Long adds USER and NICE (sprio -l).
	Long bool
	// Normalized prints the factors before weighting (sprio -n).
	Normalized bool
	// Format is sprio -o's layout, used instead of the default one.
	Format string
}

// sprioRow is one job, or the weights line of sprio -w.
type sprioRow struct {
	job     *pb.JobPriority
	weights *pb.PriorityWeights
}

// SprioLayout builds sprio's layout for the given weights as Slurm 22.05
// does: the short one leaves out the factors whose weight is 0 (SITE
// stays), the long one (-l) prints every factor.
func SprioLayout(wts *pb.PriorityWeights, o SprioOptions) string {
	up := func(c string) string {
		if o.Normalized {
			return strings.ToLower(c)
		}
		return c
	}
	if o.Long {
		return "%.15i %9r %.8u %.10" + up("Y") + " %.10" + up("S") + " %.10" + up("A") + " %.10" + up("B") + " %.10" + up("F") +
			" %.10" + up("J") + " %.10" + up("P") + " %.10" + up("Q") + " %.11N %.20" + up("T")
	}
	parts := []string{"%.15i", "%9r", "%.10" + up("Y"), "%.10" + up("S")}
	for _, f := range []struct {
		code string
		w    float64
	}{{"A", wts.GetAge()}, {"F", wts.GetFairshare()}, {"J", wts.GetJobsize()}, {"P", wts.GetPartition()}, {"Q", wts.GetQos()}} {
		if f.w != 0 {
			parts = append(parts, "%.10"+up(f.code))
		}
	}
	if len(wts.GetTres()) > 0 {
		parts = append(parts, "%20"+up("T"))
	}
	return strings.Join(parts, " ")
}

// layout is o's format, else the default one.
func (o SprioOptions) layout(wts *pb.PriorityWeights) string {
	return cmp.Or(o.Format, SprioLayout(wts, o))
}

// Sprio writes pending jobs' priority factors as sprio does.
func Sprio(w io.Writer, resp *pb.PriorityResponse, o SprioOptions) error {
	l, err := ParseLayout(o.layout(resp.GetWeights()), knownIn(sprioColumns(resp.GetWeights())))
	if err != nil {
		return err
	}
	rows := make([]sprioRow, len(resp.GetJobs()))
	for i, j := range resp.GetJobs() {
		rows[i] = sprioRow{job: j}
	}
	return table(w, l, sprioColumns(resp.GetWeights()), rows, !o.NoHeader)
}

// SprioWeights writes the configured weights as sprio -w does.
func SprioWeights(w io.Writer, wts *pb.PriorityWeights, o SprioOptions) error {
	o.Normalized = false
	l, err := ParseLayout(o.layout(wts), knownIn(sprioColumns(wts)))
	if err != nil {
		return err
	}
	return table(w, l, sprioColumns(wts), []sprioRow{{weights: wts}}, !o.NoHeader)
}

func sprioColumns(wts *pb.PriorityWeights) map[byte]column[sprioRow] {
	num := func(v float64) string { return strconv.FormatInt(int64(math.Round(v)), 10) }
	frac := func(v float64) string { return fmt.Sprintf("%.7f", v) }
	factor := func(weighted func(*pb.PriorityFactors) float64, weight float64, f func(float64) string) func(sprioRow) string {
		return func(r sprioRow) string {
			if r.weights != nil {
				return num(weight)
			}
			return f(weighted(r.job.GetFactors()))
		}
	}
	job := func(f func(*pb.JobPriority) string) func(sprioRow) string {
		return func(r sprioRow) string {
			if r.weights != nil {
				return ""
			}
			return f(r.job)
		}
	}
	return map[byte]column[sprioRow]{
		'i': {"JOBID", func(r sprioRow) string {
			if r.weights != nil {
				return "Weights"
			}
			return strconv.FormatUint(r.job.GetJobId(), 10)
		}},
		'r': {"PARTITION", job((*pb.JobPriority).GetPartition)},
		'u': {"USER", job((*pb.JobPriority).GetUser)},
		'N': {"NICE", job(func(j *pb.JobPriority) string { return strconv.Itoa(int(j.GetFactors().GetNice())) })},
		'Y': {"PRIORITY", job(func(j *pb.JobPriority) string { return num(j.GetFactors().GetTotal()) })},
		'y': {"PRIORITY", job(func(j *pb.JobPriority) string { return frac(j.GetFactors().GetTotal() / math.MaxUint32) })},
		'A': {"AGE", factor((*pb.PriorityFactors).GetWeightedAge, wts.GetAge(), num)},
		'a': {"AGE", factor((*pb.PriorityFactors).GetAge, wts.GetAge(), frac)},
		'F': {"FAIRSHARE", factor((*pb.PriorityFactors).GetWeightedFairshare, wts.GetFairshare(), num)},
		'f': {"FAIRSHARE", factor((*pb.PriorityFactors).GetFairshare, wts.GetFairshare(), frac)},
		'J': {"JOBSIZE", factor((*pb.PriorityFactors).GetWeightedJobsize, wts.GetJobsize(), num)},
		'j': {"JOBSIZE", factor((*pb.PriorityFactors).GetJobsize, wts.GetJobsize(), frac)},
		'P': {"PARTITION", factor((*pb.PriorityFactors).GetWeightedPartition, wts.GetPartition(), num)},
		'p': {"PARTITION", factor((*pb.PriorityFactors).GetPartition, wts.GetPartition(), frac)},
		'Q': {"QOS", factor((*pb.PriorityFactors).GetWeightedQos, wts.GetQos(), num)},
		'q': {"QOS", factor((*pb.PriorityFactors).GetQos, wts.GetQos(), frac)},
		// Parity has no site or association factor: Slurm's 0 for
		// each, and the weights Slurm 22.05's sprio -w prints for them
		// when none is configured (site 1, association 0).
		'S': {"SITE", site},
		's': {"SITE", site},
		'B': {"ASSOC", factor(func(*pb.PriorityFactors) float64 { return 0 }, 0, num)},
		'b': {"ASSOC", factor(func(*pb.PriorityFactors) float64 { return 0 }, 0, frac)},
		'T': {"TRES", func(r sprioRow) string { return tresFactors(r, wts, true) }},
		't': {"TRES", func(r sprioRow) string { return tresFactors(r, wts, false) }},
	}
}

// site is the SITE column: no site factor, a weight of 1.
func site(r sprioRow) string {
	if r.weights != nil {
		return "1"
	}
	return "0"
}

// tresFactors renders per-TRES factors ("gres/gpu=500"), weighted or not;
// the weights row shows the weights.
func tresFactors(r sprioRow, wts *pb.PriorityWeights, weighted bool) string {
	names := make([]string, 0, len(wts.GetTres()))
	for k := range wts.GetTres() {
		names = append(names, k)
	}
	slices.Sort(names)
	parts := make([]string, 0, len(names))
	for _, k := range names {
		var v string
		switch {
		case r.weights != nil:
			v = strconv.FormatInt(int64(math.Round(wts.GetTres()[k])), 10)
		case weighted:
			v = strconv.FormatInt(int64(math.Round(r.job.GetFactors().GetTres()[k]*wts.GetTres()[k])), 10)
		default:
			v = fmt.Sprintf("%.2f", r.job.GetFactors().GetTres()[k])
		}
		parts = append(parts, k+"="+v)
	}
	return strings.Join(parts, ",")
}
