package config

import (
	"strings"
	"testing"
)

// TestJobLimits: slurm.conf's defaults when the file says nothing, the
// file's values when it does, and a message naming the field and value
// for one out of range.
func TestJobLimits(t *testing.T) {
	const base = "cluster: x\npartitions: [{name: a, nodes: n1}]\n"
	tests := []struct {
		name, text string
		want       JobLimits
		err        string
	}{
		{"defaults", base, JobLimits{MaxArraySize: 1001, MaxJobCount: 10000, MaxScriptSize: 4 << 20, MaxNameLength: 1024}, ""},
		{"set", base + "maxArraySize: 20001\nmaxJobCount: 200000\nmaxScriptSize: 65536\nmaxNameLength: 64\n",
			JobLimits{MaxArraySize: 20001, MaxJobCount: 200000, MaxScriptSize: 65536, MaxNameLength: 64}, ""},
		{"array over Slurm's ceiling", base + "maxArraySize: 4000002\n", JobLimits{}, `c.yaml:3: maxArraySize: 4000002 must be within 1..4000001`},
		{"zero jobs", base + "maxJobCount: 0\n", JobLimits{}, `c.yaml:3: maxJobCount: 0 must be within 1..2147483647`},
		{"negative script size", base + "maxScriptSize: -1\n", JobLimits{}, `c.yaml:3: maxScriptSize: -1 must be within 1..67108864`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Parse("c.yaml", []byte(tc.text))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("got %v, want an error containing %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.JobLimits != tc.want {
				t.Fatalf("JobLimits %+v, want %+v", c.JobLimits, tc.want)
			}
		})
	}
}
