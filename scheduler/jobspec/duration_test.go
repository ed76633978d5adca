package jobspec

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestParseDuration(t *testing.T) {
	tests := []struct {
		in   string
		want time.Duration
	}{
		{"90", 90 * time.Minute},
		{"10:30", 10*time.Minute + 30*time.Second},
		{"2:00:00", 2 * time.Hour},
		{"1:90:00", 2*time.Hour + 30*time.Minute},
		{"1-12", 36 * time.Hour},
		{"1-12:30", 36*time.Hour + 30*time.Minute},
		{"7-00:00:00", 7 * 24 * time.Hour},
		{"0-0:0:1", time.Second},
		{"0", 0},
		{" 5 ", 5 * time.Minute},
		{"UNLIMITED", Unlimited},
		{"infinite", Unlimited},
		{"-1", Unlimited},
	}
	for _, tt := range tests {
		got, err := ParseDuration(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
}

func TestParseDurationRejects(t *testing.T) {
	for _, in := range []string{"", "abc", "1h", "1.5", "1-2-3", "1:2:3:4", "1:2-3", "-", "1-", "1:", ":5", "-5",
		"1-2:3:4:5", "12345678901", "99999999999:00", "2147483647"} {
		_, err := ParseDuration(in)
		var se *SyntaxError
		if !errors.Is(err, ErrInvalid) || !errors.As(err, &se) || se.Value != in {
			t.Errorf("ParseDuration(%q) error = %v; want a SyntaxError naming the value", in, err)
		}
	}
}

func TestParseTimeLimitRoundsUp(t *testing.T) {
	tests := []struct {
		in   string
		want time.Duration
	}{
		{"10:30", 11 * time.Minute},
		{"0:01", time.Minute},
		{"1:00", time.Minute},
		{"1:00:59", time.Hour + time.Minute},
		{"0", 0},
		{"UNLIMITED", Unlimited},
	}
	for _, tt := range tests {
		got, err := ParseTimeLimit(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("ParseTimeLimit(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
}

func TestFormatDuration(t *testing.T) {
	tests := []struct {
		in   time.Duration
		want string
	}{
		{0, "00:00:00"},
		{5 * time.Minute, "00:05:00"},
		{24 * time.Hour, "1-00:00:00"},
		{36*time.Hour + 30*time.Minute + 15*time.Second, "1-12:30:15"},
		{100 * time.Hour, "4-04:00:00"},
		{Unlimited, "UNLIMITED"},
	}
	for _, tt := range tests {
		if got := FormatDuration(tt.in); got != tt.want {
			t.Errorf("FormatDuration(%v) = %q; want %q", tt.in, got, tt.want)
		}
		if back, err := ParseDuration(tt.want); err != nil || back != tt.in {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v", tt.want, back, err, tt.in)
		}
	}
}

func TestDurationText(t *testing.T) {
	d := Duration(90 * time.Minute)
	b, _ := d.MarshalText()
	if string(b) != "01:30:00" {
		t.Fatalf("MarshalText = %q", b)
	}
	var back Duration
	if err := back.UnmarshalText(b); err != nil || back != d {
		t.Fatalf("UnmarshalText = %v, %v", back, err)
	}
	if err := back.UnmarshalText([]byte("soon")); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "soon") {
		t.Fatalf("UnmarshalText(soon) = %v", err)
	}
}
