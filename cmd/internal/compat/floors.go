package compat

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
)

// FloorsPath holds, per field that does not yet agree on every case, how
// many cases must agree at least: agreement may rise, never fall.
const FloorsPath = "testdata/floors.txt"

// LoadFloors reads "<same> <field>" lines; '#' starts a comment.
func LoadFloors(path string) (map[string]int, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("compat: %w", err)
	}
	out := map[string]int{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line, _, _ := strings.Cut(sc.Text(), "#")
		if strings.TrimSpace(line) == "" {
			continue
		}
		num, field, ok := strings.Cut(strings.TrimSpace(line), " ")
		same, err := strconv.Atoi(num)
		if !ok || err != nil {
			return nil, fmt.Errorf("compat: %s:%d: want \"<same> <field>\", got %q", path, n, line)
		}
		out[field] = same
	}
	return out, sc.Err()
}

// Shortfalls lists the fields whose agreement is under their floor, or
// under every case when they have none.
func (t *Table) Shortfalls(floors map[string]int) []string {
	var out []string
	check := func(field string, same, of int) {
		want, ok := floors[field]
		if !ok {
			want = of
		}
		if same < want {
			out = append(out, fmt.Sprintf("%s: %d of %d agree, want at least %d", field, same, of, want))
		}
	}
	check(acceptField, t.Agree, t.Cases)
	for f, of := range t.Seen {
		check(f, t.Same[f], of)
	}
	slices.Sort(out)
	return out
}

// WriteFloors writes the table's agreement as the floors: a line per
// field not agreeing on every case.
func (t *Table) WriteFloors(path string) error {
	var b strings.Builder
	b.WriteString("# Cases agreeing with Slurm 22.05, per field short of all of them (written by make compat-floors).\n")
	var lines []string
	if t.Agree < t.Cases {
		lines = append(lines, fmt.Sprintf("%d %s", t.Agree, acceptField))
	}
	for f, of := range t.Seen {
		if t.Same[f] < of {
			lines = append(lines, fmt.Sprintf("%d %s", t.Same[f], f))
		}
	}
	slices.SortFunc(lines, func(a, b string) int {
		_, fa, _ := strings.Cut(a, " ")
		_, fb, _ := strings.Cut(b, " ")
		return strings.Compare(fa, fb)
	})
	for _, l := range lines {
		b.WriteString(l + "\n")
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		return fmt.Errorf("compat: %w", err)
	}
	return nil
}
