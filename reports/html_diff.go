package reports

import "fmt"

// diffViewOf is the page's view of what changed since a previous run.
func diffViewOf(d RunDiff, prev *Run, anchors map[Key]string) *diffView {
	v := &diffView{PreviousID: d.PreviousID, Empty: d.Empty()}
	if !prev.Started.IsZero() {
		v.PreviousStarted = prev.Started.UTC().Format("2006-01-02 15:04 UTC")
	}
	add := func(title, class string, cs []Change, link bool) {
		if len(cs) == 0 {
			return
		}
		g := diffGroup{Title: fmt.Sprintf("%s (%d)", title, len(cs)), Class: class}
		for _, c := range cs {
			cv := changeView{Change: c, Who: cmpOr(c.Vendor, "all vendors")}
			if link {
				cv.Href = "#" + anchors[c.Key]
			}
			g.Changes = append(g.Changes, cv)
		}
		v.Groups = append(v.Groups, g)
	}
	add("New failures", "failed", d.NewFailures, true)
	add("Still failing", "failed", d.StillFailing, true)
	add("Fixed", "passed", d.Fixed, false)
	add("Other status changes", "skipped", d.Changed, false)
	add("New specs", "none", d.Added, false)
	add("Removed specs", "none", d.Removed, false)
	return v
}
