package amd

import (
	"strings"
	"testing"
)

// The parsers read files a faulty kernel, a bad firmware or a hostile lab
// tree could fill with anything; they must return errors, never panic.

func FuzzParseRASCount(f *testing.F) {
	for _, seed := range []string{"ue: 0\nce: 0\n", "ue: 3\nce: 17\nde: 1\n", "ue:\n", ":", "ue: 1\nue: 1", "\x00\xff", "ce: -1"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, in string) {
		c, err := parseRASCount(in)
		if err == nil && (!strings.Contains(in, "ue") || !strings.Contains(in, "ce")) {
			t.Fatalf("parseRASCount(%q) = %+v without both counters", in, c)
		}
	})
}

func FuzzParseProperties(f *testing.F) {
	for _, seed := range []string{
		"cpu_cores_count 0\nsimd_count 1216\nlocation_id 1280\ndomain 0\ndrm_render_minor 128\nunique_id 42\n",
		"type 11\nnode_from 8\nnode_to 9\nmax_bandwidth 64000\n",
		"location_id 99999999999999999999\n", "a b c", "k\tv\r\n", "",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, in string) {
		p, err := parseProperties("/fuzz/properties", in)
		if err != nil {
			return
		}
		// Every typed accessor and derived value must cope with any value.
		for key := range p.m {
			_, _, _ = p.uint(key)
			_, _, _ = p.int(key)
		}
		_, _ = kfdBDF(p)
		_, _ = parseIOLink(p)
	})
}
