package jobspec

import (
	"errors"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func TestParseArray(t *testing.T) {
	tests := []struct {
		in     string
		want   string
		count  int
		ranges int
		limit  int
	}{
		{"0-99", "0-99", 100, 1, 0},
		{"1,3,5-9", "1,3,5-9", 7, 3, 0},
		{"0-30:3", "0-30:3", 11, 1, 0},
		{"0-15:4%2", "0-12:4%2", 4, 1, 2},
		{"0-14:4", "0-12:4", 4, 1, 0},
		{"5,1,3,2,4", "1-5", 5, 1, 0},
		{"0-10,5-15", "0-15", 16, 1, 0},
		{"0-20:2,1-21:2", "0-21", 22, 1, 0},
		{"7", "7", 1, 1, 0},
		{"1,3", "1,3", 2, 2, 0},
		{"3,3,3", "3", 1, 1, 0},
		{"1,3,5", "1-5:2", 3, 1, 0},
		{"0-4,10-20:5", "0-4,10-20:5", 8, 2, 0},
		{"0-1000", "0-1000", 1001, 1, 0},
		{"1-5%0", "1-5", 5, 1, 0},
	}
	for _, tt := range tests {
		a, err := ParseArray(tt.in, 0)
		if err != nil {
			t.Errorf("ParseArray(%q): %v", tt.in, err)
			continue
		}
		if a.String() != tt.want || a.Len() != tt.count || len(a.Ranges()) != tt.ranges || a.Limit != tt.limit {
			t.Errorf("ParseArray(%q) = %q (%d tasks, %d ranges, limit %d); want %q (%d, %d, %d)",
				tt.in, a.String(), a.Len(), len(a.Ranges()), a.Limit, tt.want, tt.count, tt.ranges, tt.limit)
		}
	}
}

func TestParseArrayRejects(t *testing.T) {
	for _, in := range []string{"", "-1", "5-1", "0-10:0", "3:2", "0-1001", "a", "1,,2", "%5", "1-5%x", "1-5%", "1-5%2%3", "1-", "0x10"} {
		_, err := ParseArray(in, 0)
		var se *SyntaxError
		if !errors.As(err, &se) || se.Value != in || !errors.Is(err, ErrInvalid) {
			t.Errorf("ParseArray(%q) error = %v; want a SyntaxError naming the value", in, err)
		}
	}
	if _, err := ParseArray("0-2000", 2000); err != nil {
		t.Errorf("a raised maximum index must allow 2000: %v", err)
	}
}

// A 10,000-task array is a handful of ranges, not 10,000 entries.
func TestArrayLargeIsCompact(t *testing.T) {
	for in, ranges := range map[string]int{"0-9999": 1, "0-19998:2": 1, "0-4999,5000-9999": 1, "9999,0-9998": 1, "0-9999%50": 1, "0-9998:2,1-9999:2": 1} {
		a, err := ParseArray(in, 20000)
		if err != nil {
			t.Fatalf("ParseArray(%q): %v", in, err)
		}
		if len(a.Ranges()) != ranges || a.Len() != 10000 {
			t.Errorf("ParseArray(%q): %d ranges, %d tasks; want %d ranges, 10000 tasks", in, len(a.Ranges()), a.Len(), ranges)
		}
	}
	a, _ := ParseArray("0-9999", 20000)
	if !a.Contains(0) || !a.Contains(9999) || a.Contains(10000) || a.Min() != 0 || a.Max() != 9999 || a.Step() != 1 {
		t.Errorf("membership/min/max wrong for %s", a)
	}
}

// TestArrayMatchesBruteForce compares random arrays with a plain set.
func TestArrayMatchesBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	for iter := 0; iter < 300; iter++ {
		set := map[int]bool{}
		var terms []string
		for range 1 + rng.IntN(5) {
			lo := rng.IntN(60)
			hi := lo + rng.IntN(30)
			step := 1 + rng.IntN(4)
			terms = append(terms, strconv.Itoa(lo)+"-"+strconv.Itoa(hi)+":"+strconv.Itoa(step))
			for i := lo; i <= hi; i += step {
				set[i] = true
			}
		}
		in := strings.Join(terms, ",")
		a, err := ParseArray(in, 0)
		if err != nil {
			t.Fatalf("ParseArray(%q): %v", in, err)
		}
		var want []int
		for i := range 100 {
			if set[i] {
				want = append(want, i)
			}
			if a.Contains(i) != set[i] {
				t.Fatalf("%q: Contains(%d) = %v", in, i, !set[i])
			}
		}
		if got := slices.Collect(a.All()); !slices.Equal(got, want) || a.Len() != len(want) {
			t.Fatalf("%q: All = %v (Len %d); want %v", in, got, a.Len(), want)
		}
		back, err := ParseArray(a.String(), 0)
		if err != nil || back.String() != a.String() || !slices.Equal(back.Ranges(), a.Ranges()) {
			t.Fatalf("%q: String %q does not read back: %v", in, a.String(), err)
		}
		if a.Min() != want[0] || a.Max() != want[len(want)-1] {
			t.Fatalf("%q: Min/Max = %d/%d", in, a.Min(), a.Max())
		}
	}
}

func TestArrayStepAndText(t *testing.T) {
	a, _ := ParseArray("1-9:2", 0)
	if a.Step() != 2 {
		t.Errorf("Step = %d; want 2", a.Step())
	}
	b, _ := ParseArray("1,2,7", 0)
	if b.Step() != 1 {
		t.Errorf("Step of an irregular array = %d; want 1", b.Step())
	}
	text, _ := a.MarshalText()
	var back Array
	if err := back.UnmarshalText(text); err != nil || back.String() != "1-9:2" {
		t.Errorf("UnmarshalText(%q) = %s, %v", text, back.String(), err)
	}
}
