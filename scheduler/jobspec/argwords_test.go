package jobspec

import "testing"

func TestArgWords(t *testing.T) {
	cases := []struct {
		args []string
		want int
	}{
		{nil, 0},
		{[]string{"job.sh", "-p", "x"}, 0},
		{[]string{"--", "job.sh"}, 0},
		{[]string{"-"}, 0},
		{[]string{"-p", "gpu", "job.sh"}, 2},
		{[]string{"-pgpu", "job.sh"}, 1},
		{[]string{"--partition", "gpu"}, 2},
		{[]string{"--partition=gpu", "job.sh"}, 1},
		{[]string{"--part", "gpu"}, 2}, // unique prefix
		{[]string{"--hold", "job.sh"}, 1},
		{[]string{"-Hp", "gpu", "job.sh"}, 2}, // clustered flag then a value option
		{[]string{"-Hpgpu", "job.sh"}, 1},
		{[]string{"--nice", "5"}, 1}, // optional value: only --nice=5 attaches
		{[]string{"--bogus", "x"}, 1},
		{[]string{"-Z", "x"}, 1},
		{[]string{"-p"}, 1}, // missing value: Parse reports it
		{[]string{"--licenses", "a:1"}, 2},
	}
	for _, c := range cases {
		if got := ArgWords(c.args); got != c.want {
			t.Errorf("ArgWords(%q) = %d, want %d", c.args, got, c.want)
		}
	}
}
