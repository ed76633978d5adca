package core

// baseIndex finds the priority factors shared by a group of jobs. Most
// jobs' group is their shape with their QOS, so a slot per shape answers
// them by index; other keys (a refused request, a second QOS or
// partition for one shape) go to a map. Keying the map by the prioKey
// struct alone cost a map lookup through the generic path per job.
type baseIndex struct {
	byShape []baseSlot
	other   map[prioKey]*factorBase
}

type baseSlot struct {
	k    prioKey
	base *factorBase
}

func newBaseIndex(shapes int) baseIndex {
	return baseIndex{byShape: make([]baseSlot, shapes), other: map[prioKey]*factorBase{}}
}

func (x *baseIndex) find(k prioKey) *factorBase {
	if k.shape >= 0 && int(k.shape) < len(x.byShape) {
		if s := &x.byShape[k.shape]; s.base != nil && s.k == k {
			return s.base
		}
	}
	return x.other[k]
}

func (x *baseIndex) add(k prioKey, b *factorBase) {
	if k.shape >= 0 && int(k.shape) < len(x.byShape) && x.byShape[k.shape].base == nil {
		x.byShape[k.shape] = baseSlot{k, b}
		return
	}
	x.other[k] = b
}

// assocFactors caches each association's fair-share factor by account,
// then user: two string-keyed lookups take the map's fast path, where one
// keyed by an [account, user] pair hashed and compared it generically.
type assocFactors map[string]map[string]float64 // nil until first used

func (a *assocFactors) factor(account, user string, fs map[string]float64) float64 {
	if fs == nil {
		return 0 // no fair-share tree: every factor is 0
	}
	if *a == nil {
		*a = assocFactors{}
	}
	users := (*a)[account]
	if users == nil {
		users = map[string]float64{}
		(*a)[account] = users
	}
	f, ok := users[user]
	if !ok {
		f = unit(fs[account+"/"+user])
		users[user] = f
	}
	return f
}
