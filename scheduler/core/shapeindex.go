package core

// shapeIndex finds a job's shape by its key. Every pending job looks its
// shape up once a pass; a Go map keyed by the shapeKey struct hashes and
// compares it through the generic path (about 470 instructions a lookup,
// a tenth of the 10k pass), while mixing the fields here and keying a
// map by the 64-bit result takes the map's fast path. Equal hashes chain
// through next and are told apart by comparing the keys.
type shapeIndex struct {
	head map[uint64]int32
	next []int32 // by shape index: the next shape with the same hash, -1 none
}

func newShapeIndex() shapeIndex { return shapeIndex{head: map[uint64]int32{}} }

// find returns the index of the shape with key k (hash h), or -1.
func (x *shapeIndex) find(h uint64, k *shapeKey, shapes []*shape) int32 {
	si, ok := x.head[h]
	if !ok {
		return -1
	}
	for ; si >= 0; si = x.next[si] {
		if shapes[si].shapeKey == *k {
			return si
		}
	}
	return -1
}

// add records shape si (the next index) under hash h.
func (x *shapeIndex) add(h uint64, si int32) {
	prev, ok := x.head[h]
	if !ok {
		prev = -1
	}
	x.next = append(x.next, prev)
	x.head[h] = si
}

// hash mixes every field of the key (FNV-1a over 64-bit words and the
// strings' bytes): equal keys hash alike, which is all find needs.
func (k *shapeKey) hash() uint64 {
	h := uint64(fnvOffset)
	for _, v := range [...]int64{int64(k.part), int64(k.need.cpus), k.need.mem, int64(k.need.gpus), int64(k.nodes), k.limit,
		int64(k.switches), int64(k.resv), int64(k.uniq), int64(b2i(k.exclusive) | b2i(k.contiguous)<<1 | b2i(k.switchHard)<<2)} {
		h = (h ^ uint64(v)) * fnvPrime
	}
	h = mixString(h, k.need.gpuType)
	return mixString(h, k.constraint)
}

const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

// mixString mixes a string's length and bytes into h.
func mixString(h uint64, s string) uint64 {
	h = (h ^ uint64(len(s))) * fnvPrime
	for i := 0; i < len(s); i++ {
		h = (h ^ uint64(s[i])) * fnvPrime
	}
	return h
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}
