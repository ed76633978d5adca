package topology

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestParseCPUList(t *testing.T) {
	tests := []struct {
		in   string
		want []int
		str  string
	}{
		{"", []int{}, ""},
		{"0", []int{0}, "0"},
		{"0-3,8", []int{0, 1, 2, 3, 8}, "0-3,8"},
		{"0-3,8\n", []int{0, 1, 2, 3, 8}, "0-3,8"},
		{"8,0-3", []int{0, 1, 2, 3, 8}, "0-3,8"},
		{"1,2,3,5", []int{1, 2, 3, 5}, "1-3,5"},
		{"60-67", []int{60, 61, 62, 63, 64, 65, 66, 67}, "60-67"},
		{"0-1,1-2", []int{0, 1, 2}, "0-2"},
	}
	for _, tt := range tests {
		got, err := ParseCPUList(tt.in)
		if err != nil {
			t.Fatalf("ParseCPUList(%q): %v", tt.in, err)
		}
		if !reflect.DeepEqual(got.List(), tt.want) {
			t.Errorf("ParseCPUList(%q).List() = %v, want %v", tt.in, got.List(), tt.want)
		}
		if got.String() != tt.str {
			t.Errorf("ParseCPUList(%q).String() = %q, want %q", tt.in, got.String(), tt.str)
		}
		if got.Count() != len(tt.want) {
			t.Errorf("Count() = %d, want %d", got.Count(), len(tt.want))
		}
	}
}

func TestParseCPUListErrorsNameTheValue(t *testing.T) {
	for _, in := range []string{"a", "3-1", "-1", "1-", ",", "1,,2", "0-999999", "1-2-3"} {
		_, err := ParseCPUList(in)
		if !errors.Is(err, ErrCPUList) {
			t.Errorf("ParseCPUList(%q) error = %v, want ErrCPUList", in, err)
			continue
		}
		if !strings.Contains(err.Error(), in) {
			t.Errorf("error %q does not name the value %q", err, in)
		}
	}
}

func TestParseCPUMask(t *testing.T) {
	got, err := ParseCPUMask("00000001,0000000f")
	if err != nil {
		t.Fatal(err)
	}
	if got.String() != "0-3,32" {
		t.Errorf("mask = %q, want 0-3,32", got.String())
	}
	if _, err := ParseCPUMask("xyz"); !errors.Is(err, ErrCPUList) {
		t.Errorf("bad mask error = %v", err)
	}
}

func TestSetOperations(t *testing.T) {
	a := CPURange(0, 7)
	b := NewCPUSet(4, 5, 70)
	if got := a.Union(b).String(); got != "0-7,70" {
		t.Errorf("union = %q", got)
	}
	if got := a.Intersect(b).String(); got != "4-5" {
		t.Errorf("intersect = %q", got)
	}
	if got := a.Difference(b).String(); got != "0-3,6-7" {
		t.Errorf("difference = %q", got)
	}
	if !b.Contains(70) || b.Contains(71) || b.Contains(-1) {
		t.Error("Contains wrong")
	}
	if !a.Intersect(b).Equal(NewCPUSet(5, 4)) {
		t.Error("Equal wrong")
	}
	if got := a.First(3).String(); got != "0-2" {
		t.Errorf("First(3) = %q", got)
	}
	if !(CPUSet{}).IsEmpty() || a.IsEmpty() {
		t.Error("IsEmpty wrong")
	}
}

func TestCPUSetTextRoundTrip(t *testing.T) {
	var s CPUSet
	if err := s.UnmarshalText([]byte("2-5,9")); err != nil {
		t.Fatal(err)
	}
	b, _ := s.MarshalText()
	if string(b) != "2-5,9" {
		t.Errorf("round trip = %q", b)
	}
	if err := s.UnmarshalText([]byte("9-2")); err == nil {
		t.Error("want error for reversed range")
	}
}

func FuzzParseCPUList(f *testing.F) {
	for _, seed := range []string{"0-3,8", "", "1,2,3", "a-b", "0-65535", "-", "3-1"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, in string) {
		s, err := ParseCPUList(in)
		if err != nil {
			return
		}
		again, err := ParseCPUList(s.String())
		if err != nil || !again.Equal(s) {
			t.Fatalf("round trip of %q via %q failed: %v", in, s.String(), err)
		}
	})
}
