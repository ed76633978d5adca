package replay

// endEvent is a job's end; the heap orders by time, then seq, so
// simultaneous ends are processed in a fixed order. seq is the job index,
// or under Options.PassPerEvent the job's start count (ends at one
// instant come in the order the jobs started, as in predictsim).
type endEvent struct {
	t   int64
	job int32
	seq int32
}

type endHeap []endEvent

func (h endHeap) Len() int      { return len(h) }
func (h endHeap) top() endEvent { return h[0] }
func (h endHeap) less(a, b int) bool {
	return h[a].t < h[b].t || h[a].t == h[b].t && h[a].seq < h[b].seq
}

func (h *endHeap) push(e endEvent) {
	*h = append(*h, e)
	a := *h
	for i := len(a) - 1; i > 0; {
		p := (i - 1) / 2
		if !a.less(i, p) {
			break
		}
		a[i], a[p] = a[p], a[i]
		i = p
	}
}

func (h *endHeap) pop() endEvent {
	a := *h
	top := a[0]
	n := len(a) - 1
	a[0] = a[n]
	a = a[:n]
	for i := 0; ; {
		l, r, m := 2*i+1, 2*i+2, i
		if l < n && a.less(l, m) {
			m = l
		}
		if r < n && a.less(r, m) {
			m = r
		}
		if m == i {
			break
		}
		a[i], a[m] = a[m], a[i]
		i = m
	}
	*h = a
	return top
}
