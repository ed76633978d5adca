package accounting

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

func reportSpans(t testing.TB) ([]Span, time.Time, time.Time) {
	from := time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC)
	to := from.Add(24 * time.Hour)
	h := func(n float64) time.Time { return from.Add(time.Duration(n * float64(time.Hour))) }
	return []Span{
		// 4 GPUs for 2 h: 8 GPU-hours, billing 16 → 32 billing-hours.
		{User: "alice", Account: "physics", Start: h(1), End: h(3), AllocTRES: mustTRES(t, "billing=16,cpu=16,gres/gpu=4,gres/gpu:h100=4")},
		// 2 AMD GPUs for 3 h, half of it before the window: 3 GPU-hours inside.
		{User: "bob", Account: "chem", Start: h(-3), End: h(3), AllocTRES: mustTRES(t, "billing=8,cpu=8,gres/gpu=2,gres/gpu:mi300x=2")},
		// alice again under another account, running past the window's end: 1 GPU × 2 h.
		{User: "alice", Account: "chem", Start: h(22), AllocTRES: mustTRES(t, "billing=2,cpu=2,gres/gpu=1")},
		// CPU only; no billing recorded (bills 4 CPUs).
		{User: "carol", Account: "physics", Start: h(0), End: h(10), AllocTRES: mustTRES(t, "cpu=4")},
		// Entirely after the window.
		{User: "dave", Account: "physics", Start: h(30), End: h(31), AllocTRES: mustTRES(t, "billing=100,gres/gpu=8")},
	}, from, to
}

func TestUtilization(t *testing.T) {
	spans, from, to := reportSpans(t)
	u := Utilization(spans, from, to)
	want := map[string]float64{
		"gres/gpu":        (8 + 6 + 2) * 3600,
		"billing":         (32 + 24 + 4 + 40) * 3600,
		"cpu":             (32 + 24 + 4 + 40) * 3600,
		"gres/gpu:h100":   8 * 3600,
		"gres/gpu:mi300x": 6 * 3600,
	}
	for k, v := range want {
		if u[k] != v {
			t.Errorf("Utilization[%s] = %v, want %v", k, u[k], v)
		}
	}
}

func TestTopUsage(t *testing.T) {
	spans, from, to := reportSpans(t)
	users := TopUsage(spans, from, to, ByUser, TRESGPU, 0)
	var names []string
	for _, r := range users {
		names = append(names, r.Name)
	}
	if strings.Join(names, ",") != "alice,bob,carol" {
		t.Fatalf("users by GPU = %v, want alice (10 GPU-h), bob (6), carol (0)", names)
	}
	if users[0].Used[TRESGPU] != 10*3600 || strings.Join(users[0].Accounts, ",") != "chem,physics" {
		t.Errorf("alice = %+v", users[0])
	}
	byBilling := TopUsage(spans, from, to, ByUser, TRESBilling, 2)
	if len(byBilling) != 2 || byBilling[0].Name != "carol" || byBilling[1].Name != "alice" {
		t.Errorf("top 2 by billing = %+v, want carol (40) then alice (36)", byBilling)
	}
	accts := TopUsage(spans, from, to, ByAccount, TRESGPU, 0)
	if len(accts) != 2 || accts[0].Name != "chem" || accts[0].Used[TRESGPU] != 8*3600 || accts[1].Used[TRESGPU] != 8*3600 {
		t.Errorf("accounts = %+v, want chem then physics (8 GPU-h each, ties by name)", accts)
	}
}

func TestRenderReports(t *testing.T) {
	spans, from, to := reportSpans(t)
	alloc := Utilization(spans, from, to)
	opt := ReportOptions{From: from, To: to, Unit: UnitHours, TRES: []string{"gres/gpu", "billing"}, Capacity: TRES{"gres/gpu": 16, "billing": 100}, CSV: true}
	var buf bytes.Buffer
	if err := RenderUtilization(&buf, alloc, opt); err != nil {
		t.Fatal(err)
	}
	want := "TRES Name,Allocated,Idle,Reported\ngres/gpu,16.00,368.00,384.00\nbilling,100.00,2300.00,2400.00\n"
	if buf.String() != want {
		t.Errorf("utilisation CSV:\n%s\nwant:\n%s", buf.String(), want)
	}
	buf.Reset()
	opt.Unit = UnitPercent
	opt.CSV = false
	if err := RenderUtilization(&buf, alloc, opt); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	if !strings.Contains(out, "Cluster Utilization 2024-03-01T00:00:00 - 2024-03-01T23:59:59 (86400 secs)") ||
		!strings.Contains(out, "Usage reported in TRES Percentage of Total") {
		t.Errorf("banner missing:\n%s", out)
	}
	if lines := strings.Split(strings.TrimSpace(out), "\n"); strings.Join(strings.Fields(lines[len(lines)-2]), " ") != "gres/gpu 4.17% 95.83% 100.00%" {
		t.Errorf("percent row = %q", lines[len(lines)-2])
	}
	buf.Reset()
	top := TopUsage(spans, from, to, ByUser, TRESGPU, 0)
	opt = ReportOptions{From: from, To: to, Unit: UnitMinutes, TRES: []string{"gres/gpu", "billing"}, CSV: true}
	if err := RenderTopUsage(&buf, top, ByUser, alloc, opt); err != nil {
		t.Fatal(err)
	}
	want = "Login,Account,gres/gpu,billing\nalice,\"chem,physics\",600,2160\nbob,chem,360,1440\ncarol,physics,0,2400\n"
	if buf.String() != want {
		t.Errorf("top users CSV:\n%s\nwant:\n%s", buf.String(), want)
	}
	buf.Reset()
	opt.Unit = UnitPercent
	if err := RenderTopUsage(&buf, top[:1], ByUser, alloc, opt); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "alice,\"chem,physics\",62.50%,36.00%") {
		t.Errorf("percent of total allocated:\n%s", buf.String())
	}
}

func TestParseReportUnit(t *testing.T) {
	for in, want := range map[string]ReportUnit{"": UnitMinutes, "Hours": UnitHours, "percent": UnitPercent, "Seconds": UnitSeconds, "minutes": UnitMinutes} {
		if got, err := ParseReportUnit(in); err != nil || got != want {
			t.Errorf("ParseReportUnit(%q) = %v, %v", in, got, err)
		}
	}
	if _, err := ParseReportUnit("days"); err == nil || !strings.Contains(err.Error(), `"days"`) {
		t.Errorf("ParseReportUnit(days) err = %v", err)
	}
}
