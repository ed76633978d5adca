package compat

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"slices"
	"strings"
)

// DifferencesPath lists the mismatches the harness expects, each with why
// Parity answers otherwise than Slurm 22.05: the documented differences.
// Every other mismatch is a defect (go test fails on it), and so is a
// listed one that no longer differs (the list stays true).
const DifferencesPath = "testdata/differences.txt"

// EnvDifferencesPath is the same for the env cases (TestEnvCorpus).
const EnvDifferencesPath = "testdata/envdifferences.txt"

// Differences maps "case|field" to why the two differ there.
type Differences map[string]string

// Sometimes starts the why of a difference that shows or not with the
// moment of the recording (a pending job's start before or after the
// scheduler's first pass): one that does not show is not stale.
const Sometimes = "sometimes: "

func differenceKey(c, field string) string { return c + "|" + field }

// LoadDifferences reads "<case> | <field> | <why>" lines; '#' starts a
// comment line, a field of "*" stands for all of the case's fields and a
// case of "*" for every case the field is printed in.
func LoadDifferences(path string) (Differences, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("compat: %w", err)
	}
	out := Differences{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		parts := strings.SplitN(line, "|", 3)
		if len(parts) != 3 || strings.TrimSpace(parts[2]) == "" {
			return nil, fmt.Errorf("compat: %s:%d: want \"<case> | <field> | <why>\", got %q", path, n, line)
		}
		out[differenceKey(strings.TrimSpace(parts[0]), strings.TrimSpace(parts[1]))] = strings.TrimSpace(parts[2])
	}
	return out, sc.Err()
}

// Explain splits the table's mismatches into those the differences list
// (with why) and the rest, and names the listed ones that no longer
// differ.
func (t *Table) Explain(d Differences) (unexplained []Mismatch, explained []string, stale []string) {
	seen := map[string]bool{}
	for _, m := range t.Mismatches {
		k := differenceKey(m.Case, m.Field)
		why, ok := d[k]
		if !ok {
			// "*" stands for every field of the case (a job placed
			// otherwise differs in each variable of its step).
			k = differenceKey(m.Case, "*")
			why, ok = d[k]
		}
		if !ok {
			// A case of "*" stands for every case printing the field
			// (a node's CPU count in every state).
			k = differenceKey("*", m.Field)
			why, ok = d[k]
		}
		if !ok {
			unexplained = append(unexplained, m)
			continue
		}
		seen[k] = true
		explained = append(explained, fmt.Sprintf("%s\n    documented: %s", m, why))
	}
	for k, why := range d {
		if !seen[k] && !strings.HasPrefix(why, Sometimes) {
			stale = append(stale, strings.Replace(k, "|", " ", 1))
		}
	}
	slices.Sort(stale)
	return unexplained, explained, stale
}
