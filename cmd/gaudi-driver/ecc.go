package main

// ECC error counts, from the driver's event counters.
//
// Where the layout comes from (public material only):
//
//   - include/uapi/drm/habanalabs_accel.h: INFO op HL_INFO_HW_EVENTS_AGGREGATE
//     (7) returns "an array describing how many times each event occurred
//     since the driver was loaded"; the array is indexed by the ASIC's
//     event id, one __u32 per event (struct hl_info_hw_ip_info's
//     num_of_events sizes it). HL_INFO_HW_EVENTS (1) counts since the last
//     hard reset instead; since-driver-load is what dcgm-exporter's
//     *_VOL_TOTAL ("volatile") counters mean, so the adapter asks for the
//     aggregate.
//   - common/habanalabs_ioctl.c hw_events_info copies min(return_size,
//     the ASIC's array) bytes, so a shorter buffer reads a prefix.
//   - The event ids: drivers/accel/habanalabs/include/gaudi/
//     gaudi_async_events.h and include/gaudi2/gaudi2_async_events.h, where
//     each ECC event of a memory is named *_SERR (single error, corrected)
//     or *_DERR (double error, uncorrectable); gaudi2.c's event handler
//     treats the whole block PCIE_CORE_SERR..ARC0_ECC_DERR as ECC events.
//     Every event increments its counter (gaudi_handle_eqe and
//     gaudi2_handle_eqe: events_stat_aggregate[event_type]++).
//   - Gaudi 3's event ids are in Habana's out-of-tree driver only, whose
//     header no public source this adapter was written from holds: its
//     cards report ECC as not measured ("ras") rather than a guess.
//
// The tables below list the SERR and DERR id ranges of each header
// (inclusive), read off the enums.
type eccEvents struct {
	// size is the ASIC's event count (GAUDI_EVENT_SIZE, GAUDI2_EVENT_SIZE):
	// the buffer the adapter asks for.
	size      int
	corrected [][2]int
	uncorrect [][2]int
	// example is one id of each kind (an HBM channel's single and double
	// error), which the simulator's inject command raises.
	example [2]int
}

var (
	// gaudi_async_events.h: GAUDI_EVENT_SIZE is 663. AXI_ECC and
	// L2_RAM_ECC (the CPU's) do not say which kind they are and are left out.
	gaudi1ECC = &eccEvents{size: 663, example: [2]int{185, 189}, // GAUDI_EVENT_HBM_0_SERR, _DERR
		corrected: [][2]int{{32, 32}, {34, 34}, {36, 36}, {38, 45}, {54, 54}, {56, 56}, {58, 58}, {60, 60}, {62, 62},
			{64, 64}, {66, 66}, {68, 68}, {70, 77}, {86, 86}, {88, 89}, {92, 123}, {156, 160}, {176, 179}, {185, 188}, {193, 193}},
		uncorrect: [][2]int{{33, 33}, {35, 35}, {37, 37}, {46, 53}, {55, 55}, {57, 57}, {59, 59}, {61, 61}, {63, 63},
			{65, 65}, {67, 67}, {69, 69}, {78, 85}, {87, 87}, {90, 91}, {124, 155}, {166, 170}, {180, 183}, {189, 192}, {194, 194}},
	}
	// gaudi2_async_events.h: GAUDI2_EVENT_SIZE is 1329; the ECC block is
	// ids 32..410 (234, CPU_GIC500, is not an ECC event).
	gaudi2ECC = &eccEvents{size: 1329, example: [2]int{235, 247}, // GAUDI2_EVENT_HBM_0_MC0_ECC_SERR, _DERR
		corrected: [][2]int{{32, 32}, {34, 34}, {36, 36}, {38, 62}, {88, 115}, {144, 151}, {160, 162}, {166, 166}, {168, 168},
			{170, 201}, {235, 246}, {259, 274}, {291, 291}, {295, 314}, {337, 352}, {369, 380}, {397, 404}, {409, 409}},
		uncorrect: [][2]int{{33, 33}, {35, 35}, {37, 37}, {63, 87}, {116, 143}, {152, 159}, {163, 165}, {167, 167}, {169, 169},
			{202, 233}, {247, 258}, {275, 290}, {292, 292}, {315, 334}, {353, 368}, {381, 396}, {405, 408}, {410, 410}},
	}
)

// count sums the counters of the table's corrected and uncorrected events;
// ids past the end of counters (an older driver's shorter array) count 0.
func (t *eccEvents) count(counters []uint32) (corrected, uncorrected uint64) {
	sum := func(ranges [][2]int) uint64 {
		var s uint64
		for _, r := range ranges {
			for id := r[0]; id <= r[1] && id < len(counters); id++ {
				s += uint64(counters[id])
			}
		}
		return s
	}
	return sum(t.corrected), sum(t.uncorrect)
}
