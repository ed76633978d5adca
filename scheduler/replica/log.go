package replica

import (
	"bytes"
	"context"
	"io"
	"log/slog"

	"github.com/hashicorp/go-hclog"
)

// hclogger gives raft a logger that writes through slog: raft logs with
// hclog, and every line it writes becomes one slog record at the level
// hclog put in front of it.
func hclogger(name string, log *slog.Logger) hclog.Logger {
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return hclog.New(&hclog.LoggerOptions{Name: name, Level: hclog.Info, Output: &slogWriter{log: log},
		DisableTime: true})
}

// slogWriter turns hclog's lines ("[WARN]  raft: message: k=v") into slog
// records.
type slogWriter struct{ log *slog.Logger }

func (w *slogWriter) Write(p []byte) (int, error) {
	for line := range bytes.Lines(p) {
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		level := slog.LevelInfo
		switch {
		case bytes.HasPrefix(line, []byte("[ERROR]")):
			level = slog.LevelError
		case bytes.HasPrefix(line, []byte("[WARN]")):
			level = slog.LevelWarn
		case bytes.HasPrefix(line, []byte("[DEBUG]")), bytes.HasPrefix(line, []byte("[TRACE]")):
			level = slog.LevelDebug
		}
		if i := bytes.IndexByte(line, ']'); i >= 0 {
			line = bytes.TrimSpace(line[i+1:])
		}
		w.log.Log(context.Background(), level, string(line))
	}
	return len(p), nil
}
