package accounting

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// now is Wednesday 2024-03-13 15:04:05 UTC.
var testNow = time.Date(2024, 3, 13, 15, 4, 5, 0, time.UTC)

func TestParseTime(t *testing.T) {
	d := func(y int, m time.Month, day, h, min, s int) time.Time {
		return time.Date(y, m, day, h, min, s, 0, time.UTC)
	}
	tests := []struct {
		in   string
		want time.Time
	}{
		{"2024-01-02", d(2024, 1, 2, 0, 0, 0)},
		{"2024-01-02T10:30", d(2024, 1, 2, 10, 30, 0)},
		{"2024-01-02T10:30:15", d(2024, 1, 2, 10, 30, 15)},
		{"now", testNow},
		{"NOW", testNow},
		{"now-3days", testNow.Add(-72 * time.Hour)},
		{"now+1hour", testNow.Add(time.Hour)},
		{"now-90", testNow.Add(-90 * time.Second)},
		{"now-2weeks", testNow.Add(-14 * 24 * time.Hour)},
		{"now-30minutes", testNow.Add(-30 * time.Minute)},
		{"today", d(2024, 3, 13, 0, 0, 0)},
		{"midnight", d(2024, 3, 13, 0, 0, 0)},
		{"noon", d(2024, 3, 13, 12, 0, 0)},
		{"elevenses", d(2024, 3, 13, 11, 0, 0)},
		{"fika", d(2024, 3, 13, 15, 0, 0)},
		{"teatime", d(2024, 3, 13, 16, 0, 0)},
		{"tomorrow", d(2024, 3, 14, 0, 0, 0)},
		{"tomorrow18:00", d(2024, 3, 14, 18, 0, 0)},
		{"today08:15:30", d(2024, 3, 13, 8, 15, 30)},
		{"10:30", d(2024, 3, 13, 10, 30, 0)},
		{"10:30PM", d(2024, 3, 13, 22, 30, 0)},
		{"12:00am", d(2024, 3, 13, 0, 0, 0)},
		{"12:00pm", d(2024, 3, 13, 12, 0, 0)},
		{"0102", d(2024, 1, 2, 0, 0, 0)},
		{"010223", d(2023, 1, 2, 0, 0, 0)},
		{"01/02/23", d(2023, 1, 2, 0, 0, 0)},
		{"01.02.23", d(2023, 1, 2, 0, 0, 0)},
		{"01/02", d(2024, 1, 2, 0, 0, 0)},
		{"01/02/2022", d(2022, 1, 2, 0, 0, 0)},
		{"01/02-10:30", d(2024, 1, 2, 10, 30, 0)},
		{"0229-23:59:59", d(2024, 2, 29, 23, 59, 59)},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseTime(tc.in, testNow, time.UTC)
			if err != nil {
				t.Fatalf("ParseTime(%q): %v", tc.in, err)
			}
			if !got.Equal(tc.want) {
				t.Fatalf("ParseTime(%q) = %v, want %v", tc.in, got, tc.want)
			}
		})
	}
}

func TestParseTimeInZone(t *testing.T) {
	est := time.FixedZone("EST", -5*3600)
	got, err := ParseTime("2024-01-02T10:00", testNow, est)
	if err != nil || !got.Equal(time.Date(2024, 1, 2, 15, 0, 0, 0, time.UTC)) {
		t.Fatalf("ParseTime in EST = %v, %v; want 15:00 UTC", got, err)
	}
	// "today" is the zone's day: 15:04 UTC is 10:04 EST, the same date.
	got, err = ParseTime("today", testNow, est)
	if err != nil || !got.Equal(time.Date(2024, 3, 13, 5, 0, 0, 0, time.UTC)) {
		t.Fatalf("today in EST = %v, %v; want 05:00 UTC", got, err)
	}
}

func TestParseTimeErrorsNameTheInput(t *testing.T) {
	for _, in := range []string{"", "yesterday", "2024-13-01", "2024-02-30", "25:00", "10:61", "now*3", "now-3fortnights",
		"13/01", "02/30", "10:30:00:00", "2024-01-02T", "0:30PM", "13:00PM", "1/2/3/4", "now-", "aa/bb", "now+2000000000weeks", "now-99999999999"} {
		_, err := ParseTime(in, testNow, time.UTC)
		if !errors.Is(err, ErrBadTime) {
			t.Errorf("ParseTime(%q) err = %v, want ErrBadTime", in, err)
			continue
		}
		if !strings.Contains(err.Error(), `"`+in+`"`) {
			t.Errorf("error %q does not quote the input %q", err, in)
		}
	}
}

func TestParseDuration(t *testing.T) {
	tests := []struct {
		in   string
		want time.Duration
	}{
		{"7-0", 7 * 24 * time.Hour},
		{"30", 30 * time.Minute},
		{"1:30", 90 * time.Second},
		{"1:00:00", time.Hour},
		{"1-12", 36 * time.Hour},
		{"1-2:3", 26*time.Hour + 3*time.Minute},
		{"1-2:3:4", 26*time.Hour + 3*time.Minute + 4*time.Second},
		{"0", 0},
	}
	for _, tc := range tests {
		if got, err := ParseDuration(tc.in); err != nil || got != tc.want {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
	for _, in := range []string{"", "x", "1:2:3:4", "-1", "1-", "1-x", "1:-2"} {
		if _, err := ParseDuration(in); !errors.Is(err, ErrBadTime) || !strings.Contains(err.Error(), `"`+in+`"`) {
			t.Errorf("ParseDuration(%q) err = %v, want ErrBadTime naming it", in, err)
		}
	}
}

func TestFormatDurations(t *testing.T) {
	tests := []struct {
		got, want string
	}{
		{FormatDuration(0), "00:00:00"},
		{FormatDuration(90061 * time.Second), "1-01:01:01"},
		{FormatDuration(5 * time.Minute), "00:05:00"},
		{FormatDuration(-time.Second), "INVALID"},
		{FormatCPUTime(1234 * time.Millisecond), "00:01.234"},
		{FormatCPUTime(61*time.Second + 5*time.Millisecond), "01:01.005"},
		{FormatCPUTime(2 * time.Hour), "02:00:00"},
		{FormatTime(time.Time{}, time.UTC), "Unknown"},
		{FormatTime(testNow, time.UTC), "2024-03-13T15:04:05"},
	}
	for i, tc := range tests {
		if tc.got != tc.want {
			t.Errorf("case %d: got %q, want %q", i, tc.got, tc.want)
		}
	}
}
