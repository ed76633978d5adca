package jobspec

import (
	"errors"
	"testing"
	"time"
)

func TestParseMemory(t *testing.T) {
	tests := []struct {
		in   string
		want int64
	}{
		{"4096", 4096}, {"4G", 4096}, {"4g", 4096}, {"4GB", 4096}, {"500M", 500}, {"500mb", 500},
		{"1T", 1 << 20}, {"512K", 1}, {"1025K", 2}, {"0", 0}, {"0G", 0},
	}
	for _, tt := range tests {
		if got, err := ParseMemory(tt.in); err != nil || got != tt.want {
			t.Errorf("ParseMemory(%q) = %d, %v; want %d", tt.in, got, err, tt.want)
		}
	}
	for _, in := range []string{"", "G", "-1", "4X", "4.5G", "1e3", "4 G", "4GiB", "999999999999999T", "9999999999999999"} {
		if got, err := ParseMemory(in); !errors.Is(err, ErrInvalid) {
			t.Errorf("ParseMemory(%q) = %d, %v; want an ErrInvalid error", in, got, err)
		}
	}
}

func TestFormatMemory(t *testing.T) {
	for mb, want := range map[int64]string{4096: "4G", 1500: "1500M", 1 << 20: "1T", 0: "0M", 1: "1M"} {
		if got := FormatMemory(mb); got != want {
			t.Errorf("FormatMemory(%d) = %q; want %q", mb, got, want)
		}
		if back, err := ParseMemory(want); err != nil || back != mb {
			t.Errorf("ParseMemory(%q) = %d, %v; want %d", want, back, err, mb)
		}
	}
}

func TestParseNodes(t *testing.T) {
	tests := []struct {
		in   string
		want NodeRange
	}{
		{"2", NodeRange{2, 2}}, {"2-4", NodeRange{2, 4}}, {"1k", NodeRange{1024, 1024}}, {"2K-4k", NodeRange{2048, 4096}},
		{"1m", NodeRange{1 << 20, 1 << 20}},
	}
	for _, tt := range tests {
		if got, err := ParseNodes(tt.in); err != nil || got != tt.want {
			t.Errorf("ParseNodes(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
	for _, in := range []string{"", "0", "4-2", "a", "-2", "2-", "1-15:4", "2.5", "99m"} {
		if got, err := ParseNodes(in); !errors.Is(err, ErrInvalid) {
			t.Errorf("ParseNodes(%q) = %v, %v; want an ErrInvalid error", in, got, err)
		}
	}
}

func TestParseSwitches(t *testing.T) {
	n, wait, err := ParseSwitches("2")
	if err != nil || n != 2 || wait != 0 {
		t.Fatalf("ParseSwitches(2) = %d, %v, %v", n, wait, err)
	}
	n, wait, err = ParseSwitches("1@10:00")
	if err != nil || n != 1 || wait != 10*time.Minute {
		t.Fatalf("ParseSwitches(1@10:00) = %d, %v, %v", n, wait, err)
	}
	for _, in := range []string{"", "x", "1@bad", "1@UNLIMITED", "@5", "-1"} {
		if _, _, err := ParseSwitches(in); !errors.Is(err, ErrInvalid) {
			t.Errorf("ParseSwitches(%q) error = %v; want ErrInvalid", in, err)
		}
	}
}
