package compat

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
)

// CorpusPath is the committed corpus, relative to this package.
const CorpusPath = "testdata/corpus.jsonl"

// Load reads a corpus: one case a line, with Slurm's answer.
func Load(path string) ([]Case, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("compat: %w", err)
	}
	var out []Case
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		var c Case
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			return nil, fmt.Errorf("compat: %s:%d: %w", path, n, err)
		}
		out = append(out, c)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("compat: %s: %w", path, err)
	}
	return out, nil
}

// Save writes cases as a corpus.
func Save(path string, cases []Case) error {
	var b bytes.Buffer
	for _, c := range cases {
		line, err := json.Marshal(c)
		if err != nil {
			return fmt.Errorf("compat: %s: %w", c.ID, err)
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		return fmt.Errorf("compat: %w", err)
	}
	return nil
}
