package compat

import (
	"slices"
	"strings"
	"testing"
)

func TestParseRecordKeepsBlanksInValues(t *testing.T) {
	got := ParseRecord("JobId=7 JobName=my job UserId=root(0) TRES=cpu=1,mem=62.50G Comment=a b Power= ")
	want := []Field{{"JobId", "7"}, {"JobName", "my job"}, {"UserId", "root(0)"}, {"TRES", "cpu=1,mem=62.50G"}, {"Comment", "a b"}, {"Power", ""}}
	if !slices.Equal(got, want) {
		t.Errorf("ParseRecord = %v, want %v", got, want)
	}
}

func TestNormalise(t *testing.T) {
	n := ids{job: "1", prev: "12"}
	cases := []struct{ key, in, want string }{
		{"JobId", "1", "$ID"},
		{"StdOut", "/w/c1/./logs/t1-1-%N.out", "$CWD/./logs/t1-$ID-%N.out"},
		{"StdOut", "/w/c1/slurm-1_4294967294.out", "$CWD/slurm-$ID_4294967294.out"},
		{"Dependency", "afterok:12(unfulfilled)", "afterok:$PREV(unfulfilled)"},
		{"NumCPUs", "1", "1"}, // a count, not an id
		{"JobName", "t1", "t1"},
		{"SubmitTime", "2026-12-02T00:13:28", "$TIME"},
	}
	for _, c := range cases {
		if got := normalise(c.key, c.in, "/w/c1", n); got != c.want {
			t.Errorf("normalise(%s=%s) = %q, want %q", c.key, c.in, got, c.want)
		}
	}
	q := NormaliseQueue("1_[1,3%2]|1|1|1,3%2|t1", "/w/c1", n)
	if q["squeue %i"] != "$ID_[1,3%2]" || q["squeue %K"] != "1,3%2" || q["squeue %A"] != "$ID" {
		t.Errorf("NormaliseQueue = %v", q)
	}
	if got := normaliseText("sbatch: Job 4012 to start at 2026-12-02T00:13:28 using 1 processors on nodes n1 in partition gpu", ""); got != "sbatch: Job $ID to start at $TIME using 1 processors on nodes n1 in partition gpu" {
		t.Errorf("normaliseText = %q", got)
	}
}

// The generator is deterministic and reaches every option, every
// placement (command line, directive, SBATCH_* variable) and the script
// decorations.
func TestGenerateCoversTheVocabulary(t *testing.T) {
	a, b := Generate(1, 600), Generate(1, 600)
	if len(a) != 600 {
		t.Fatalf("%d cases", len(a))
	}
	seen := map[string]bool{}
	var env, directive, arg, testOnly, stop, tab bool
	for i := range a {
		if a[i].Script != b[i].Script || !slices.Equal(a[i].Args, b[i].Args) {
			t.Fatalf("case %d differs between two runs with one seed", i)
		}
		c := a[i]
		text := strings.Join(c.Args, " ") + "\n" + c.Script
		for _, o := range options {
			if strings.Contains(text, "--"+o.long) || o.env != "" && c.Env[o.env] != "" {
				seen[o.long] = true
			}
		}
		env = env || len(c.Env) > 0
		directive = directive || strings.Contains(c.Script, "\n#SBATCH")
		arg = arg || len(c.Args) > 0
		testOnly = testOnly || c.TestOnly
		stop = stop || strings.Contains(c.Script, "hostname\n#SBATCH")
		tab = tab || strings.Contains(c.Script, "#SBATCH\t")
	}
	for _, o := range options {
		if !seen[o.long] {
			t.Errorf("no case spells --%s", o.long)
		}
	}
	if !env || !directive || !arg || !testOnly || !stop || !tab {
		t.Errorf("placements reached: env %v directive %v argument %v test-only %v directive after a command %v tab %v", env, directive, arg, testOnly, stop, tab)
	}
}

func TestTableShortfalls(t *testing.T) {
	tab := NewTable()
	tab.Add("c1", &Answer{Accepted: true, Record: "JobId=1 NodeList="}, &Answer{Accepted: true, Record: "JobId=1 NodeList=(null)"})
	tab.Add("c2", &Answer{Accepted: false, Error: "x"}, &Answer{Accepted: true})
	got := tab.Shortfalls(map[string]int{"NodeList": 0})
	want := []string{"accept/reject: 1 of 2 agree, want at least 2"}
	if !slices.Equal(got, want) {
		t.Errorf("Shortfalls = %q, want %q", got, want)
	}
	if got := tab.Shortfalls(nil); len(got) != 2 {
		t.Errorf("without floors every short field is reported: %q", got)
	}
}

func TestExplainSplitsDocumentedDifferences(t *testing.T) {
	tab := NewTable()
	tab.Add("c1", &Answer{Accepted: true, Record: "JobId=1 NumCPUs=4"}, &Answer{Accepted: true, Record: "JobId=1 NumCPUs=1"})
	tab.Add("c2", &Answer{Accepted: true, Record: "JobId=1 Features="}, &Answer{Accepted: true, Record: "JobId=1 Features=(null)"})
	unexplained, explained, stale := tab.Explain(Differences{"c1|NumCPUs": "why", "c9|TRES": "gone"})
	if len(unexplained) != 1 || unexplained[0].Case != "c2" || len(explained) != 1 || !strings.Contains(explained[0], "documented: why") ||
		!slices.Equal(stale, []string{"c9 TRES"}) {
		t.Errorf("Explain = %v, %q, %q; want c2 unexplained, c1 documented, c9 TRES stale", unexplained, explained, stale)
	}
	// A case listed with "*" explains each of its fields; one that no
	// longer differs at all is stale.
	unexplained, explained, stale = tab.Explain(Differences{"c2|*": "placed otherwise", "c1|NumCPUs": "why", "c3|*": "gone"})
	if len(unexplained) != 0 || len(explained) != 2 || !slices.Equal(stale, []string{"c3 *"}) {
		t.Errorf("Explain with *: %v, %q, %q; want none unexplained, both documented, c3 * stale", unexplained, explained, stale)
	}
}
