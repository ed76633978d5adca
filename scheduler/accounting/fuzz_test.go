package accounting

import (
	"testing"
	"time"
)

// Whatever ParseTRES accepts prints back to a string that parses to the
// same TRES.
func FuzzParseTRES(f *testing.F) {
	for _, s := range []string{"billing=4,cpu=4,gres/gpu=1,mem=400M,node=1", "mem=1.5G", "gres/gpu:h100=8", "", "cpu=1e3", "mem=0.1K"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tr, err := ParseTRES(s)
		if err != nil {
			return
		}
		again, err := ParseTRES(tr.String())
		if err != nil {
			t.Fatalf("%q printed as %q, which does not parse: %v", s, tr.String(), err)
		}
		if !again.Equal(tr) {
			t.Fatalf("%q → %q → %v, want %v", s, tr.String(), again, tr)
		}
	})
}

// The user-input parsers of sacct/sreport never panic.
func FuzzUserInput(f *testing.F) {
	for _, s := range []string{"now-3days", "2024-01-02T10:30", "01/02/23-10:00", "10:30PM", "tomorrow18:00",
		"JobID,JobName%30", "123_4.batch", "r,CD", "CPU=1,Mem=0.25G", "7-0"} {
		f.Add(s)
	}
	now := time.Date(2024, 3, 13, 15, 4, 5, 0, time.UTC)
	f.Fuzz(func(t *testing.T, s string) {
		ParseTime(s, now, time.UTC) //nolint:errcheck // looking for panics
		ParseFormat(s)              //nolint:errcheck
		ParseJobSelectors(s)        //nolint:errcheck
		ParseStates(s)              //nolint:errcheck
		ParseBillingWeights(s)      //nolint:errcheck
		ParseDuration(s)            //nolint:errcheck
		ParseAccounts([]byte(s))    //nolint:errcheck
	})
}
