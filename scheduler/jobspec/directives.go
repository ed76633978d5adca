package jobspec

import (
	"bytes"
	"strconv"
	"strings"
)

// Directive prefixes: #SBATCH, and the legacy #SLURM sbatch still reads.
const (
	DirectivePrefix       = "#SBATCH"
	LegacyDirectivePrefix = "#SLURM"
)

// Directive is one #SBATCH line: its 1-based line number, the prefix used
// and its words after quote removal.
type Directive struct {
	Line   int
	Prefix string
	Text   string
	Words  []string
}

// ScanDirectives reads the directives of a batch script as sbatch does: a
// directive starts in column 0 with the case-sensitive prefix #SBATCH
// (legacy #SLURM is read too, with a warning); blank lines and comments,
// indented ones included, are skipped; the first line with anything else
// ends the scan, so later directives are ignored. Each directive is split
// into words: white space separates, single and double quotes group,
// backslash escapes, and a # starting a word begins a trailing comment.
// Values are literal: no variable or command expansion.
func ScanDirectives(script []byte) (dirs []Directive, warnings []string, err error) {
	lineNo := 0
	for rest := script; len(rest) > 0; {
		var line []byte
		line, rest, _ = bytes.Cut(rest, []byte{'\n'})
		lineNo++
		text := strings.TrimSuffix(string(line), "\r")
		prefix := ""
		switch {
		case strings.HasPrefix(text, DirectivePrefix):
			prefix = DirectivePrefix
		case strings.HasPrefix(text, LegacyDirectivePrefix):
			prefix = LegacyDirectivePrefix
			warnings = append(warnings, "line "+strconv.Itoa(lineNo)+": the #SLURM prefix is deprecated, use #SBATCH")
		default:
			trimmed := strings.TrimLeft(text, " \t\f\v")
			if trimmed == "" || trimmed[0] == '#' {
				continue
			}
			return dirs, warnings, nil
		}
		words, werr := SplitWords(text[len(prefix):])
		if werr != nil {
			return nil, nil, &DirectiveError{Line: lineNo, Text: text, Reason: werr.Error()}
		}
		dirs = append(dirs, Directive{Line: lineNo, Prefix: prefix, Text: text, Words: words})
	}
	return dirs, warnings, nil
}

// SplitWords splits a directive's text into words: blanks separate, '...'
// keeps text literally, "..." keeps text but honours \" and \\, a backslash
// outside quotes escapes the next character, and an unquoted # at the start
// of a word ends the line (a trailing comment).
func SplitWords(s string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\f' || c == '\v':
			if inWord {
				words, inWord = append(words, cur.String()), false
				cur.Reset()
			}
			continue
		case c == '#' && !inWord:
			return words, nil
		}
		inWord = true
		switch c {
		case '\\':
			if i+1 < len(s) {
				i++
				cur.WriteByte(s[i])
			}
		case '\'':
			end := strings.IndexByte(s[i+1:], '\'')
			if end < 0 {
				return nil, reason("unterminated ' quote")
			}
			cur.WriteString(s[i+1 : i+1+end])
			i += end + 1
		case '"':
			j := i + 1
			for ; j < len(s) && s[j] != '"'; j++ {
				if s[j] == '\\' && j+1 < len(s) && (s[j+1] == '"' || s[j+1] == '\\') {
					j++
				}
				cur.WriteByte(s[j])
			}
			if j >= len(s) {
				return nil, reason("unterminated \" quote")
			}
			i = j
		default:
			cur.WriteByte(c)
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}
