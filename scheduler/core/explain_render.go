package core

import (
	"fmt"
	"strings"
	"time"
)

// String renders the explanation for people, one fact per line.
func (e Explanation) String() string {
	var b strings.Builder
	switch e.Action {
	case ActionStart:
		fmt.Fprintf(&b, "Job %d would start now in partition %s.\n", e.Job, e.Partition)
	default:
		fmt.Fprintf(&b, "Job %d is pending in partition %s: %s", e.Job, e.Partition, e.Reason)
		if e.Detail != "" {
			fmt.Fprintf(&b, " (%s)", e.Detail)
		}
		b.WriteString(".\n")
	}
	fmt.Fprintf(&b, "  Rank %d of %d pending", e.Rank+1, e.Pending)
	if e.Ahead > 0 {
		fmt.Fprintf(&b, "; %d higher-priority job(s) of its partition are waiting ahead of it", e.Ahead)
	}
	b.WriteString(".\n")
	pr := e.Priority
	fmt.Fprintf(&b, "  Priority %.0f = age %.0f + fairshare %.0f + jobsize %.0f + partition %.0f + qos %.0f + tres %.0f - nice %d\n",
		pr.Total, pr.Weighted.Age, pr.Weighted.FairShare, pr.Weighted.JobSize, pr.Weighted.Partition, pr.Weighted.QOS, pr.Weighted.TRES, pr.Nice)
	fmt.Fprintf(&b, "    factors: age %.3f, fairshare %.3f, jobsize %.3f, partition %.3f, qos %.3f\n",
		pr.Age, pr.FairShare, pr.JobSize, pr.Partition, pr.QOS)
	if len(e.Partitions) > 0 {
		b.WriteString("  Partitions:\n")
		for _, v := range e.Partitions {
			fmt.Fprintf(&b, "    %s: %s", v.Partition, verdictText(v, e.Action == ActionStart && v.Partition == e.Partition))
			if v.StartKnown {
				fmt.Fprintf(&b, "; expected start %s", v.ExpectedStart.UTC().Format(time.RFC3339))
			}
			b.WriteString("\n")
		}
	}
	if e.Need != "" {
		fmt.Fprintf(&b, "  Needs %s.\n", e.Need)
	}
	for _, f := range e.Facts {
		fmt.Fprintf(&b, "  - %s\n", f)
	}
	if len(e.Nodes) > 0 {
		b.WriteString("  Nodes of the partition:\n")
		for _, rc := range e.Nodes {
			r := string(rc.Reason)
			if rc.Reason == FilterOK {
				r = "fit now"
			}
			fmt.Fprintf(&b, "    %4d %s (e.g. %s)\n", rc.Count, r, strings.Join(rc.Examples, ", "))
		}
	}
	switch {
	case e.Action == ActionStart:
	case e.StartKnown:
		fmt.Fprintf(&b, "  Expected start: %s.\n", e.ExpectedStart.UTC().Format(time.RFC3339))
	default:
		b.WriteString("  Expected start: unknown.\n")
	}
	for _, s := range e.Suggestions {
		fmt.Fprintf(&b, "  Try: %s.\n", s)
	}
	return b.String()
}

// verdictText is one partition's line: its reason and detail, or that the
// pass did not need to look there.
func verdictText(v PartitionVerdict, started bool) string {
	switch {
	case started:
		return "starts now here"
	case v.Reason == "":
		return "not tried (the job starts elsewhere or has not been considered)"
	case v.Detail != "":
		return fmt.Sprintf("%s (%s)", v.Reason, v.Detail)
	}
	return string(v.Reason)
}
