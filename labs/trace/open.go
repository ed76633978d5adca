package trace

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// Open reads the trace at path, choosing the reader by extension (.swf,
// .csv) or, failing that, by content: a first non-blank line that starts
// with ';' or a digit is SWF, anything else a CSV header.
func Open(path string, opts Options) (*Trace, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("trace: %w", err)
	}
	defer f.Close()
	t, err := Read(f, Sniff(path, nil), opts)
	if err == nil {
		return t, nil
	}
	return nil, fmt.Errorf("%s: %w", path, err)
}

// Read reads r in the given format; an empty format is detected from the content.
func Read(r io.Reader, format Format, opts Options) (*Trace, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	if format == "" {
		head, _ := br.Peek(4096)
		format = Sniff("", head)
	}
	switch format {
	case FormatSWF:
		return ReadSWF(br, opts)
	case FormatGPUCSV:
		return ReadGPUCSV(br, opts)
	}
	return nil, fmt.Errorf("%w: %q", ErrFormat, format)
}

// Sniff names the format of a file from its name, else from its first
// bytes; it returns "" when head is needed but nil.
func Sniff(name string, head []byte) Format {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".swf":
		return FormatSWF
	case ".csv":
		return FormatGPUCSV
	}
	if head == nil {
		return ""
	}
	for _, l := range strings.Split(string(head), "\n") {
		l = strings.TrimSpace(l)
		if l == "" {
			continue
		}
		if l[0] == ';' || l[0] >= '0' && l[0] <= '9' {
			return FormatSWF
		}
		return FormatGPUCSV
	}
	return FormatSWF
}
