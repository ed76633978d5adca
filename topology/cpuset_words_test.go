package topology

import "testing"

func TestCPUSetWordsRoundTrip(t *testing.T) {
	cases := []struct {
		words []uint64
		want  string
	}{
		{nil, ""},
		{[]uint64{0, 0}, ""},
		{[]uint64{0b1011}, "0-1,3"},
		{[]uint64{1 << 63, 1, 0, 0}, "63-64"},
	}
	for _, c := range cases {
		in := append([]uint64(nil), c.words...)
		s := CPUSetFromWords(in)
		if got := s.String(); got != c.want {
			t.Errorf("CPUSetFromWords(%#x) = %q, want %q", c.words, got, c.want)
		}
		if len(in) > 0 {
			in[0] = ^uint64(0) // the set must not share the caller's words
			if got := s.String(); got != c.want {
				t.Errorf("CPUSetFromWords(%#x) changed with its input: %q", c.words, got)
			}
		}
		want, _ := ParseCPUList(c.want)
		if !s.Equal(want) {
			t.Errorf("CPUSetFromWords(%#x) is not Equal to ParseCPUList(%q)", c.words, c.want)
		}
		if back := CPUSetFromWords(s.Words()); !back.Equal(s) {
			t.Errorf("Words round trip of %q gives %q", c.want, back)
		}
	}
}

func TestCPUSetWord(t *testing.T) {
	s, _ := ParseCPUList("1,64-65")
	for i, want := range map[int]uint64{-1: 0, 0: 2, 1: 3, 2: 0} {
		if got := s.Word(i); got != want {
			t.Errorf("Word(%d) = %#x, want %#x", i, got, want)
		}
	}
}

func TestCPUSetWordLen(t *testing.T) {
	s, _ := ParseCPUList("1,130")
	if s.WordLen() != 3 || (CPUSet{}).WordLen() != 0 {
		t.Errorf("WordLen = %d, empty %d", s.WordLen(), CPUSet{}.WordLen())
	}
}
