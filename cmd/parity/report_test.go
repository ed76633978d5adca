package main

import (
	"strings"
	"testing"
)

func TestReportTopUsersAndUtilization(t *testing.T) {
	path := testLedger(t)
	// The window is the 12th and the 13th: bob 2 GPUs × 4 h = 8 GPU-h,
	// alice 2 × 2 = 4, carol 1 × 1 (run 0) + 1 × 1 (run 1) = 2.
	out, err := runAcctCmd(t, newReportCmdWith(testAcctEnv(nil)), "top-users", "--ledger", path,
		"--start", "2024-03-12", "--end", "2024-03-14", "-t", "hours", "--csv")
	if err != nil {
		t.Fatal(err)
	}
	want := "Login,Account,gres/gpu,billing\nbob,physics,8.00,64.00\nalice,physics,4.00,32.00\ncarol,chem,2.00,16.00\n"
	if out != want {
		t.Fatalf("top users:\n%s\nwant:\n%s", out, want)
	}
	// sreport's form, key=value window, top count, accounts, percent of capacity.
	out, err = runAcctCmd(t, newReportCmdWith(testAcctEnv(nil)), "account", "topusage", "start=2024-03-12", "end=2024-03-14",
		"topcount=1", "--ledger", path, "-t", "percent", "--capacity", "gres/gpu=4,billing=32", "--csv")
	if err != nil {
		t.Fatal(err)
	}
	// physics: 12 GPU-h of 4 GPUs × 48 h = 192 → 6.25%.
	if out != "Account,gres/gpu,billing\nphysics,6.25%,6.25%\n" {
		t.Fatalf("top accounts:\n%s", out)
	}
	out, err = runAcctCmd(t, newReportCmdWith(testAcctEnv(nil)), "cluster", "utilization", "--ledger", path,
		"--start", "2024-03-13", "--end", "2024-03-14", "-t", "hours", "--capacity", "gres/gpu=4", "-T", "gres/gpu")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "Cluster Utilization 2024-03-13T00:00:00 - 2024-03-13T23:59:59 (86400 secs)") {
		t.Errorf("banner:\n%s", out)
	}
	last := strings.Fields(strings.TrimSpace(out)[strings.LastIndex(strings.TrimSpace(out), "\n")+1:])
	if strings.Join(last, " ") != "gres/gpu 6.00 90.00 96.00" {
		t.Errorf("utilisation row = %v, want alice 4 + carol 2 GPU-h of 96", last)
	}
}

// Default window: yesterday (the 12th), when only bob ran.
func TestReportDefaultWindow(t *testing.T) {
	path := testLedger(t)
	out, err := runAcctCmd(t, newReportCmdWith(testAcctEnv(nil)), "top-users", "--ledger", path, "--csv", "-t", "minutes")
	if err != nil {
		t.Fatal(err)
	}
	if out != "Login,Account,gres/gpu,billing\nbob,physics,480,3840\n" {
		t.Fatalf("yesterday's top users:\n%s", out)
	}
}

func TestReportBadInput(t *testing.T) {
	path := testLedger(t)
	tests := []struct {
		args    []string
		mention string
	}{
		{[]string{"top-chefs"}, `"top-chefs"`},
		{[]string{"top-users", "start=tomorrowish"}, `"tomorrowish"`},
		{[]string{"top-users", "--end", "2024-03-01", "--start", "2024-03-02"}, "is not after start"},
		{[]string{"top-users", "colour=blue"}, `"colour=blue"`},
		{[]string{"top-users", "topcount=-1"}, `topcount="-1"`},
		{[]string{"top-users", "-t", "fortnights"}, `"fortnights"`},
		{[]string{"cluster-utilization", "--capacity", "gpu"}, "--capacity"},
		{[]string{"top-users", "-T", "gres/gpu,,cpu"}, "--tres"},
	}
	for _, tc := range tests {
		_, err := runAcctCmd(t, newReportCmdWith(testAcctEnv(nil)), append(tc.args, "--ledger", path)...)
		if err == nil || !strings.Contains(err.Error(), tc.mention) {
			t.Errorf("%v: err = %v, want mention of %s", tc.args, err, tc.mention)
		}
	}
}
