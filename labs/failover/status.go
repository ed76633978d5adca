package failover

import (
	"context"
	"fmt"
	"io"
	"slices"
	"text/tabwriter"
	"time"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/auth"
)

// status asks one controller for its view; nil when it does not answer.
func (g *group) status(ctx context.Context, addr string) *pb.ControllerStatus {
	cl, err := g.dial(addr, "root", auth.RoleAdmin)
	if err != nil {
		return nil
	}
	defer cl.Close()
	cctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	st, err := cl.ControllerStatus(cctx)
	if err != nil {
		return nil
	}
	return st
}

// WriteTable prints the trials and their summary: failover median and
// worst, and the promises' totals.
func WriteTable(w io.Writer, trials []Trial) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "trial\tkilled after\tfailover ms\tacked\tlost\tduplicates\treused ids\t")
	var fo []time.Duration
	var lost, dups, reused, failed int
	for _, t := range trials {
		fmt.Fprintf(tw, "%d\t%d\t%d\t%d\t%d\t%d\t%d\t%s\n", t.N, t.KilledAt, t.Failover.Milliseconds(), t.Acked, t.Lost, t.Duplicates, t.ReusedIDs, t.Err)
		if t.Failover > 0 {
			fo = append(fo, t.Failover)
		}
		lost, dups, reused = lost+t.Lost, dups+t.Duplicates, reused+t.ReusedIDs
		if t.Err != "" {
			failed++
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	slices.Sort(fo)
	var median, worst time.Duration
	if len(fo) > 0 {
		median, worst = fo[len(fo)/2], fo[len(fo)-1]
	}
	_, err := fmt.Fprintf(w, "\nfailover median %d ms, worst %d ms over %d trials (targets 2000 / 5000 ms); lost %d, duplicates %d, reused ids %d, trials with errors %d\n",
		median.Milliseconds(), worst.Milliseconds(), len(trials), lost, dups, reused, failed)
	return err
}

// Verdict is nil when every trial kept the promises and ran to its end.
func Verdict(trials []Trial) error {
	for _, t := range trials {
		if t.Err != "" || t.Lost > 0 || t.Duplicates > 0 || t.ReusedIDs > 0 {
			return fmt.Errorf("failover: trial %d broke a promise or failed: lost %d, duplicates %d, reused ids %d %s", t.N, t.Lost, t.Duplicates, t.ReusedIDs, t.Err)
		}
	}
	return nil
}
