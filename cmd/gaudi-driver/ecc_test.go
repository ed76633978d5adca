package main

import (
	"context"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/parityhpc/parity/cmd/gaudi-driver/gaudisim"
)

// TestSampleCountsECCEvents: the driver's per-event counters become the
// card's corrected and uncorrectable ECC counts, by the ASIC's SERR and
// DERR event ids; other events (a GIC interrupt) and other cards do not
// count.
func TestSampleCountsECCEvents(t *testing.T) {
	m, d, _ := board(t, gaudisim.Config{Cards: 2})
	for _, id := range []int{
		235, 235, // GAUDI2_EVENT_HBM_0_MC0_ECC_SERR twice
		170,  // GAUDI2_EVENT_SRAM0_ECC_SERR
		247,  // GAUDI2_EVENT_HBM_0_MC0_ECC_DERR
		410,  // GAUDI2_EVENT_ARC0_ECC_DERR, the block's last id
		234,  // GAUDI2_EVENT_CPU_GIC500: no ECC event
		1328, // GAUDI2_EVENT_ARC_EQ_HEARTBEAT: the array's last id
	} {
		if err := m.RaiseEvent(1, id); err != nil {
			t.Fatal(err)
		}
	}
	s, err := d.Sample(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if s[1].CorrectedErrors != 3 || s[1].UncorrectedErrors != 2 || slices.Contains(s[1].Missing, "ras") {
		t.Errorf("card 1: %d corrected, %d uncorrected, missing %v; want 3 and 2, measured", s[1].CorrectedErrors, s[1].UncorrectedErrors, s[1].Missing)
	}
	if s[0].CorrectedErrors != 0 || s[0].UncorrectedErrors != 0 || slices.Contains(s[0].Missing, "ras") {
		t.Errorf("card 0: %+v; want no ECC errors, measured", s[0])
	}
}

// TestGaudi1ECCEvents: the first generation's ids differ from Gaudi 2's
// (its HBM errors are ids 185 and 189, where Gaudi 2 has an SRAM's).
func TestGaudi1ECCEvents(t *testing.T) {
	m, d, _ := board(t, gaudisim.Config{Family: "GAUDI", Cards: 1})
	for _, id := range []int{185, 189, 189, 217} { // HBM_0_SERR, HBM_0_DERR twice, AXI_ECC (kind unknown)
		if err := m.RaiseEvent(0, id); err != nil {
			t.Fatal(err)
		}
	}
	s, err := d.Sample(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if s[0].CorrectedErrors != 1 || s[0].UncorrectedErrors != 2 {
		t.Errorf("Gaudi card: %d corrected, %d uncorrected; want 1 and 2", s[0].CorrectedErrors, s[0].UncorrectedErrors)
	}
}

// TestECCNotMeasured: a Gaudi 3 (no public event table) and a card whose
// counters cannot be read report ECC as not measured, never as zero.
func TestECCNotMeasured(t *testing.T) {
	_, d, _ := board(t, gaudisim.Config{Family: "GAUDI3", Cards: 1})
	s, err := d.Sample(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(s[0].Missing, "ras") {
		t.Errorf("Gaudi 3 sample %+v; want ECC (ras) not measured", s[0])
	}
	// The default meter over a simulated tree: the placeholder control
	// node cannot answer the INFO ioctl.
	root := t.TempDir()
	if _, err := gaudisim.Generate(root, gaudisim.Config{Cards: 1}); err != nil {
		t.Fatal(err)
	}
	s, err = NewDriver(root).Sample(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(s[0].Missing, "ras") || s[0].CorrectedErrors != 0 {
		t.Errorf("sample without the driver %+v; want ECC (ras) not measured", s[0])
	}
}

// TestECCCountsAShorterArray: an older driver's array, shorter than the
// table, counts the ids it has.
func TestECCCountsAShorterArray(t *testing.T) {
	counters := make([]uint32, 240)
	counters[38], counters[63], counters[235] = 4, 1, 2 // TPC0 SERR, TPC0 DERR, HBM_0_MC0 SERR
	ce, ue := gaudi2ECC.count(counters)
	if ce != 6 || ue != 1 {
		t.Errorf("count = %d, %d; want 6 corrected, 1 uncorrected", ce, ue)
	}
}

// TestECCTablesAreDisjoint: no event id is both corrected and
// uncorrectable, and every id fits the ASIC's array.
func TestECCTablesAreDisjoint(t *testing.T) {
	for name, tab := range map[string]*eccEvents{"gaudi": gaudi1ECC, "gaudi2": gaudi2ECC} {
		kind := map[int]string{}
		for k, ranges := range map[string][][2]int{"corrected": tab.corrected, "uncorrected": tab.uncorrect} {
			for _, r := range ranges {
				if r[0] > r[1] || r[1] >= tab.size {
					t.Errorf("%s %s range %v: not within 0..%d", name, k, r, tab.size-1)
				}
				for id := r[0]; id <= r[1]; id++ {
					if prev, ok := kind[id]; ok {
						t.Errorf("%s event %d is %s and %s", name, id, prev, k)
					}
					kind[id] = k
				}
			}
		}
		if kind[tab.example[0]] != "corrected" || kind[tab.example[1]] != "uncorrected" {
			t.Errorf("%s examples %v are %q and %q", name, tab.example, kind[tab.example[0]], kind[tab.example[1]])
		}
	}
}

// TestInjectECC: inject --fault ecc-ce / ecc-ue raise what the adapter
// reads as one corrected and one uncorrectable error; a Gaudi 3 is refused
// by name.
func TestInjectECC(t *testing.T) {
	root := t.TempDir()
	if _, err := gaudisim.Generate(root, gaudisim.Config{Cards: 2}); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"ecc-ce", "ecc-ue", "ecc-ue"} {
		if err := run(context.Background(), []string{"inject", "--root", root, "--card", "1", "--fault", f}, io.Discard, nil); err != nil {
			t.Fatal(err)
		}
	}
	s, err := NewDriver(root, withMeter(simMeter{root: root})).Sample(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if s[1].CorrectedErrors != 1 || s[1].UncorrectedErrors != 2 || s[0].CorrectedErrors+s[0].UncorrectedErrors != 0 {
		t.Errorf("after inject: card 1 %d/%d, card 0 %d/%d; want 1/2 and 0/0", s[1].CorrectedErrors, s[1].UncorrectedErrors, s[0].CorrectedErrors, s[0].UncorrectedErrors)
	}
	g3 := t.TempDir()
	if _, err := gaudisim.Generate(g3, gaudisim.Config{Family: "GAUDI3", Cards: 1}); err != nil {
		t.Fatal(err)
	}
	err = run(context.Background(), []string{"inject", "--root", g3, "--card", "0", "--fault", "ecc-ue"}, io.Discard, nil)
	if err == nil || !strings.Contains(err.Error(), "GAUDI3") {
		t.Errorf("inject ecc-ue on a Gaudi 3: %v; want it refused naming GAUDI3", err)
	}
}
