package core

import "math/bits"

// bitset is a set of node indices, 64 per word: static constraints
// (partition, features, device type) and dynamic classes (free device
// count) combine with a few word-wide ANDs instead of per-node checks.
type bitset []uint64

func newBitset(n int) bitset { return make(bitset, (n+63)/64) }

func (b bitset) set(i int)      { b[i>>6] |= 1 << uint(i&63) }
func (b bitset) clear(i int)    { b[i>>6] &^= 1 << uint(i&63) }
func (b bitset) has(i int) bool { return b[i>>6]&(1<<uint(i&63)) != 0 }

func (b bitset) count() int {
	n := 0
	for _, w := range b {
		n += bits.OnesCount64(w)
	}
	return n
}

func (b bitset) clone() bitset { return append(bitset(nil), b...) }

// and keeps only the bits also in o.
func (b bitset) and(o bitset) {
	for i := range b {
		b[i] &= o[i]
	}
}

// andNot removes the bits in o.
func (b bitset) andNot(o bitset) {
	for i := range b {
		b[i] &^= o[i]
	}
}

// or adds the bits in o.
func (b bitset) or(o bitset) {
	for i := range b {
		b[i] |= o[i]
	}
}

// each calls f for every member in ascending order until f returns false.
func (b bitset) each(f func(i int) bool) {
	for wi, w := range b {
		for w != 0 {
			t := bits.TrailingZeros64(w)
			if !f(wi<<6 | t) {
				return
			}
			w &= w - 1
		}
	}
}

// cpuBits is a per-node CPU bitset in an arena slice.
type cpuBits []uint64

func (c cpuBits) count() int {
	n := 0
	for _, w := range c {
		n += bits.OnesCount64(w)
	}
	return n
}
