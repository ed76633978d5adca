package nvidia_test

import (
	"testing"

	"github.com/parityhpc/parity/gres"
	"github.com/parityhpc/parity/healthcheck"
	"github.com/parityhpc/parity/vendors/nvidia"
)

func TestClassifyXID(t *testing.T) {
	tests := []struct {
		xid    uint64
		sev    gres.Severity
		action string
	}{
		{8, gres.SeverityWarning, healthcheck.RemedyNone},
		{13, gres.SeverityInfo, healthcheck.RemedyNone},
		{31, gres.SeverityInfo, healthcheck.RemedyNone},
		{43, gres.SeverityInfo, healthcheck.RemedyNone},
		{45, gres.SeverityInfo, healthcheck.RemedyNone},
		{46, gres.SeverityFatal, healthcheck.RemedyReset},
		{48, gres.SeverityFatal, healthcheck.RemedyReset},
		{61, gres.SeverityWarning, healthcheck.RemedyDrain},
		{62, gres.SeverityFatal, healthcheck.RemedyReset},
		{63, gres.SeverityWarning, healthcheck.RemedyReset},
		{64, gres.SeverityFatal, healthcheck.RemedyReset},
		{74, gres.SeverityFatal, healthcheck.RemedyDrain},
		{79, gres.SeverityFatal, healthcheck.RemedyReboot},
		{92, gres.SeverityWarning, healthcheck.RemedyDrain},
		{94, gres.SeverityWarning, healthcheck.RemedyNone},
		{95, gres.SeverityFatal, healthcheck.RemedyReset},
		{109, gres.SeverityFatal, healthcheck.RemedyReset},
		{119, gres.SeverityFatal, healthcheck.RemedyReset},
		{120, gres.SeverityFatal, healthcheck.RemedyReset},
		{140, gres.SeverityFatal, healthcheck.RemedyReset},
		{144, gres.SeverityFatal, healthcheck.RemedyDrain},
		{150, gres.SeverityFatal, healthcheck.RemedyDrain},
		{154, gres.SeverityWarning, healthcheck.RemedyNone},
		{157, gres.SeverityFatal, healthcheck.RemedyReset},
		{158, gres.SeverityFatal, healthcheck.RemedyReset},
		{12345, gres.SeverityWarning, healthcheck.RemedyNone}, // unknown
		{0, gres.SeverityWarning, healthcheck.RemedyNone},     // unknown
	}
	for _, tc := range tests {
		c := nvidia.ClassifyXID(tc.xid)
		if c.Severity != tc.sev || c.Action != tc.action || c.Meaning == "" {
			t.Errorf("ClassifyXID(%d) = %+v, want %v/%s with a meaning", tc.xid, c, tc.sev, tc.action)
		}
	}
}

func TestXIDCatalogueSortedAndUnique(t *testing.T) {
	cat := nvidia.XIDCatalogue()
	if len(cat) == 0 {
		t.Fatal("empty catalogue")
	}
	for i := 1; i < len(cat); i++ {
		if cat[i].XID <= cat[i-1].XID {
			t.Fatalf("catalogue not strictly ascending at %d: %d after %d", i, cat[i].XID, cat[i-1].XID)
		}
	}
	for _, e := range cat {
		switch e.Class.Action {
		case healthcheck.RemedyNone, healthcheck.RemedyReset, healthcheck.RemedyReboot, healthcheck.RemedyDrain:
		default:
			t.Errorf("XID %d has remedy %q, not one of the Remedy constants", e.XID, e.Class.Action)
		}
		if got := nvidia.ClassifyXID(e.XID); got != e.Class {
			t.Errorf("ClassifyXID(%d) = %+v, catalogue says %+v", e.XID, got, e.Class)
		}
	}
	// The caller owns the slice: changing it must not change the table.
	cat[0].Class.Action = "bogus"
	if nvidia.ClassifyXID(cat[0].XID).Action == "bogus" {
		t.Error("XIDCatalogue shares its backing array")
	}
}
