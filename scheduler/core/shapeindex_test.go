package core

import (
	"testing"
	"time"

	"github.com/parityhpc/parity/scheduler/policy"
)

// TestShapeIndexCollisions: keys whose hashes collide are still told
// apart, and each finds its own shape.
func TestShapeIndexCollisions(t *testing.T) {
	keys := []shapeKey{
		{part: 0, need: need{cpus: 4}, nodes: 1},
		{part: 0, need: need{cpus: 4, gpuType: "h100"}, nodes: 1},
		{part: 1, need: need{cpus: 4}, nodes: 2, constraint: "ib"},
	}
	x := newShapeIndex()
	var shapes []*shape
	const sameHash = 42 // force every key onto one chain
	for i, k := range keys {
		if got := x.find(sameHash, &k, shapes); got != -1 {
			t.Fatalf("key %d found as %d before it was added", i, got)
		}
		shapes = append(shapes, &shape{shapeKey: k})
		x.add(sameHash, int32(i))
	}
	for i, k := range keys {
		if got := x.find(sameHash, &k, shapes); got != int32(i) {
			t.Fatalf("key %d: found %d", i, got)
		}
		if got := x.find(k.hash(), &k, shapes); got != -1 {
			t.Fatalf("key %d: found %d under its real hash, which was never added", i, got)
		}
	}
}

// TestShapeKeyHashCoversFields: keys differing in any one field hash
// differently (not needed for correctness, but a field left out would
// chain every such shape onto one list).
func TestShapeKeyHashCoversFields(t *testing.T) {
	base := shapeKey{part: 1, need: need{cpus: 2, mem: 3, gpus: 4, gpuType: "a"}, nodes: 5, limit: 6, switches: 7, constraint: "c", resv: 8, uniq: 9}
	variants := []func(k *shapeKey){
		func(k *shapeKey) { k.part++ }, func(k *shapeKey) { k.need.cpus++ }, func(k *shapeKey) { k.need.mem++ },
		func(k *shapeKey) { k.need.gpus++ }, func(k *shapeKey) { k.need.gpuType = "b" }, func(k *shapeKey) { k.nodes++ },
		func(k *shapeKey) { k.limit++ }, func(k *shapeKey) { k.exclusive = true }, func(k *shapeKey) { k.contiguous = true },
		func(k *shapeKey) { k.switches++ }, func(k *shapeKey) { k.switchHard = true }, func(k *shapeKey) { k.constraint = "d" },
		func(k *shapeKey) { k.resv++ }, func(k *shapeKey) { k.uniq++ },
	}
	for i, change := range variants {
		k := base
		change(&k)
		if k.hash() == base.hash() {
			t.Errorf("variant %d hashes like the base key", i)
		}
	}
}

// TestAgeFactorMatchesPolicy: the pass's age factor in seconds equals
// policy.AgeFactor on the same instants.
func TestAgeFactorMatchesPolicy(t *testing.T) {
	now := int64(1_700_000_000)
	maxAge := 7 * 24 * time.Hour
	for _, e := range []int64{0, now + 10, now, now - 1, now - 3600, now - int64(maxAge/time.Second) + 1, now - int64(maxAge/time.Second), now - 10*86400} {
		want := policy.AgeFactor(timeOf(e), time.Unix(now, 0), maxAge)
		if got := ageFactor(e, now, maxAge); got != want {
			t.Errorf("eligible %d: got %v, policy says %v", e, got, want)
		}
	}
	if got, want := ageFactor(now-3600, now, 0), policy.AgeFactor(time.Unix(now-3600, 0), time.Unix(now, 0), 0); got != want {
		t.Errorf("default max age: got %v, policy says %v", got, want)
	}
}
