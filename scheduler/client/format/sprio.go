package format

import (
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
}

// sprioRow is one job, or the weights line of sprio -w.
type sprioRow struct {
	job     *pb.JobPriority
	weights *pb.PriorityWeights
}

// SprioLayout builds sprio's layout for the given weights: factors whose
// weight is 0 are left out, as Slurm does.
func SprioLayout(wts *pb.PriorityWeights, o SprioOptions) string {
	up := func(c string) string {
		if o.Normalized {
			return strings.ToLower(c)
		}
		return c
	}
	parts := []string{"%.15i", "%9r"}
	if o.Long {
		parts = append(parts, "%.8u")
	}
	parts = append(parts, "%.10"+up("Y"))
	for _, f := range []struct {
		code string
		w    float64
	}{{"A", wts.GetAge()}, {"F", wts.GetFairshare()}, {"J", wts.GetJobsize()}, {"P", wts.GetPartition()}, {"Q", wts.GetQos()}} {
		if f.w != 0 {
			parts = append(parts, "%.10"+up(f.code))
		}
	}
	if o.Long {
		parts = append(parts, "%.6N")
	}
	if len(wts.GetTres()) > 0 {
		parts = append(parts, "%20"+up("T"))
	}
	return strings.Join(parts, " ")
}

// Sprio writes pending jobs' priority factors as sprio does.
func Sprio(w io.Writer, resp *pb.PriorityResponse, o SprioOptions) error {
	l, err := ParseLayout(SprioLayout(resp.GetWeights(), o), knownIn(sprioColumns(resp.GetWeights())))
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
	l, err := ParseLayout(SprioLayout(wts, o), knownIn(sprioColumns(wts)))
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
		'T': {"TRES", func(r sprioRow) string { return tresFactors(r, wts, true) }},
		't': {"TRES", func(r sprioRow) string { return tresFactors(r, wts, false) }},
	}
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
