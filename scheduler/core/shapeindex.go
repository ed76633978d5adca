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

// shapeOf returns the index of the key's shape, building it on first use.
func (p *pass) shapeOf(key shapeKey, j *Job) int32 {
	h := key.hash()
	if si := p.shapeIdx.find(h, &key, p.shapes); si >= 0 {
		return si
	}
	si := int32(len(p.shapes))
	p.shapes = append(p.shapes, p.buildShape(key, j))
	p.shapeIdx.add(h, si)
	return si
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
	flags := b2i(k.exclusive) | b2i(k.contiguous)<<1 | b2i(k.switchHard)<<2
	h := mix(fnvOffset, uint64(k.part)<<32|uint64(uint32(k.need.cpus)))
	h = mix(h, uint64(k.need.mem))
	h = mix(h, uint64(k.need.gpus)<<32|uint64(uint32(k.nodes)))
	h = mix(h, uint64(k.limit))
	h = mix(h, uint64(k.switches)<<32|uint64(uint32(k.resv)))
	h = mix(h, uint64(k.uniq)<<32|uint64(flags))
	h = mixString(h, k.need.gpuType)
	return mixString(h, k.constraint)
}

func mix(h, v uint64) uint64 { return (h ^ v) * fnvPrime }

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

func b2i(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}
