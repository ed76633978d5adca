package healthcheck

import (
	"testing"

	"github.com/parityhpc/parity/gres"
)

func TestClassifyXID(t *testing.T) {
	tests := []struct {
		xid    uint64
		sev    gres.Severity
		action string
	}{
		{8, gres.SeverityWarning, RemedyNone},
		{13, gres.SeverityInfo, RemedyNone},
		{31, gres.SeverityInfo, RemedyNone},
		{43, gres.SeverityInfo, RemedyNone},
		{45, gres.SeverityInfo, RemedyNone},
		{46, gres.SeverityFatal, RemedyReset},
		{48, gres.SeverityFatal, RemedyReset},
		{61, gres.SeverityWarning, RemedyDrain},
		{62, gres.SeverityFatal, RemedyReset},
		{63, gres.SeverityWarning, RemedyReset},
		{64, gres.SeverityFatal, RemedyReset},
		{74, gres.SeverityFatal, RemedyDrain},
		{79, gres.SeverityFatal, RemedyReboot},
		{92, gres.SeverityWarning, RemedyDrain},
		{94, gres.SeverityWarning, RemedyNone},
		{95, gres.SeverityFatal, RemedyReset},
		{109, gres.SeverityFatal, RemedyReset},
		{119, gres.SeverityFatal, RemedyReset},
		{120, gres.SeverityFatal, RemedyReset},
		{140, gres.SeverityFatal, RemedyReset},
		{144, gres.SeverityFatal, RemedyDrain},
		{150, gres.SeverityFatal, RemedyDrain},
		{154, gres.SeverityWarning, RemedyNone},
		{157, gres.SeverityFatal, RemedyReset},
		{158, gres.SeverityFatal, RemedyReset},
		{12345, gres.SeverityWarning, RemedyNone}, // unknown
		{0, gres.SeverityWarning, RemedyNone},     // unknown
	}
	for _, tc := range tests {
		c := ClassifyXID(tc.xid)
		if c.Severity != tc.sev || c.Action != tc.action || c.Meaning == "" {
			t.Errorf("ClassifyXID(%d) = %+v, want %v/%s with a meaning", tc.xid, c, tc.sev, tc.action)
		}
	}
}

func TestXIDCatalogueSortedAndUnique(t *testing.T) {
	cat := XIDCatalogue()
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
		case RemedyNone, RemedyReset, RemedyReboot, RemedyDrain:
		default:
			t.Errorf("XID %d has remedy %q, not one of the Remedy constants", e.XID, e.Class.Action)
		}
		if got := ClassifyXID(e.XID); got != e.Class {
			t.Errorf("ClassifyXID(%d) = %+v, catalogue says %+v", e.XID, got, e.Class)
		}
	}
	// The caller owns the slice: changing it must not change the table.
	cat[0].Class.Action = "bogus"
	if ClassifyXID(cat[0].XID).Action == "bogus" {
		t.Error("XIDCatalogue shares its backing array")
	}
}
