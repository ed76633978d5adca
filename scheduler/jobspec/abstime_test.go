package jobspec

import (
	"errors"
	"testing"
	"time"
)

// tuesday is the injected "now" of the time tests: 2026-03-10 14:30:15 UTC.
var tuesday = time.Date(2026, 3, 10, 14, 30, 15, 0, time.UTC)

func at(y int, m time.Month, d, h, min, s int) time.Time {
	return time.Date(y, m, d, h, min, s, 0, time.UTC)
}

func TestParseTime(t *testing.T) {
	tests := []struct {
		in   string
		want time.Time
	}{
		{"2026-04-01", at(2026, 4, 1, 0, 0, 0)},
		{"2026-04-01T10:20", at(2026, 4, 1, 10, 20, 0)},
		{"2026-04-01T10:20:30", at(2026, 4, 1, 10, 20, 30)},
		{"2025-01-01", at(2025, 1, 1, 0, 0, 0)}, // explicit year: past is fine
		{"16:00", at(2026, 3, 10, 16, 0, 0)},
		{"10:00", at(2026, 3, 11, 10, 0, 0)}, // already past today
		{"14:30:16", at(2026, 3, 10, 14, 30, 16)},
		{"4:00 PM", at(2026, 3, 10, 16, 0, 0)},
		{"11:00am", at(2026, 3, 11, 11, 0, 0)},
		{"12:15am", at(2026, 3, 11, 0, 15, 0)},
		{"now", tuesday},
		{"now+60", tuesday.Add(time.Minute)},
		{"now+1hour", tuesday.Add(time.Hour)},
		{"NOW+2days", tuesday.Add(48 * time.Hour)},
		{"now+1week", tuesday.Add(7 * 24 * time.Hour)},
		{"now-10minutes", tuesday.Add(-10 * time.Minute)},
		{"today", at(2026, 3, 10, 0, 0, 0)},
		{"tomorrow", at(2026, 3, 11, 0, 0, 0)},
		{"midnight", at(2026, 3, 11, 0, 0, 0)},
		{"noon", at(2026, 3, 11, 12, 0, 0)},
		{"teatime", at(2026, 3, 10, 16, 0, 0)},
		{"fika", at(2026, 3, 10, 15, 0, 0)},
		{"elevenses", at(2026, 3, 11, 11, 0, 0)},
		{"tomorrow18:00", at(2026, 3, 11, 18, 0, 0)},
		{"tomorrow noon", at(2026, 3, 11, 12, 0, 0)},
		{"today teatime", at(2026, 3, 10, 16, 0, 0)},
		{"040126", at(2026, 4, 1, 0, 0, 0)},
		{"04/01/26", at(2026, 4, 1, 0, 0, 0)},
		{"04.01.2027", at(2027, 4, 1, 0, 0, 0)},
		{"04/01", at(2026, 4, 1, 0, 0, 0)},
		{"01/15", at(2027, 1, 15, 0, 0, 0)}, // no year and already past: next year
		{"0115", at(2027, 1, 15, 0, 0, 0)},
		{"03/10", at(2026, 3, 10, 0, 0, 0)}, // today is not past
		{"02/29/28", at(2028, 2, 29, 0, 0, 0)},
	}
	for _, tt := range tests {
		got, err := ParseTime(tt.in, tuesday, time.UTC)
		if err != nil || !got.Equal(tt.want) {
			t.Errorf("ParseTime(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
}

func TestParseTimeRejects(t *testing.T) {
	for _, in := range []string{"", "yesterday", "2026-13-01", "2026-02-30", "02/29/27", "25:00", "12:60", "12:00:61",
		"now+1fortnight", "now+", "now*3", "13:00pm", "0:30am", "2026-1-1", "12345", "1969-12-31", "now+999999999weeks",
		"10:00 tomorrowish", "T10:00"} {
		if got, err := ParseTime(in, tuesday, time.UTC); !errors.Is(err, ErrInvalid) {
			t.Errorf("ParseTime(%q) = %v, %v; want an ErrInvalid error", in, got, err)
		}
	}
}

func TestParseTimeLocation(t *testing.T) {
	ny := time.FixedZone("EST", -5*3600)
	got, err := ParseTime("2026-04-01T10:00", tuesday, ny)
	if err != nil {
		t.Fatal(err)
	}
	if want := at(2026, 4, 1, 15, 0, 0); !got.Equal(want) || got.Location() != ny {
		t.Fatalf("got %v; want %v in EST", got, want)
	}
	// "16:00" is read on the clock of loc: 16:00 EST is 21:00 UTC, still today there.
	got, _ = ParseTime("16:00", tuesday, ny)
	if want := at(2026, 3, 10, 21, 0, 0); !got.Equal(want) {
		t.Fatalf("16:00 EST = %v; want %v", got, want)
	}
	if s := FormatTime(got, ny); s != "2026-03-10T16:00:00" {
		t.Fatalf("FormatTime = %q", s)
	}
}
