package sbatch

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/parityhpc/parity/scheduler/client/clientenv"
	"github.com/parityhpc/parity/scheduler/jobspec"
)

// Help is submit's description (after its usage line).
const Help = `Submit a batch script as sbatch does: #SBATCH directives are read up to the
first command, SBATCH_* environment variables override them and command-line
options override both. Without SCRIPT the script is read from standard input;
--wrap "cmd" makes a /bin/sh script around cmd.

  --parsable          print only the job id
  -Q, --quiet         print nothing on success
  --test-only         validate against the cluster and say where and when the
                      job would start; nothing is queued
  --parse-only        print the fully resolved request (with --json: as JSON,
                      each field's source included); nothing is submitted
  -W, --wait          wait for the job to end; exit with its exit code

Parity's own flags (--controller, --token, --ca, --json) may appear anywhere before
SCRIPT. Errors name the option, its value and where it came from.`

// Env is what submit takes from the world: the clock, the zone times are
// printed in, the process environment, the working directory, the host
// name and standard input. Tests build their own.
type Env struct {
	Now      func() time.Time
	Loc      *time.Location
	Getenv   func(string) string
	Environ  func() []string
	Getwd    func() (string, error)
	Hostname func() (string, error)
	Stdin    io.Reader
	// Voice words errors and warnings (Slurm's when invoked as sbatch).
	Voice Voice
}

// RealEnv is the process's own.
func RealEnv() Env {
	return Env{Now: time.Now, Loc: time.Local, Getenv: os.Getenv, Environ: os.Environ,
		Getwd: os.Getwd, Hostname: os.Hostname, Stdin: os.Stdin}
}

// Flags are Parity's own flags on an sbatch command line.
type Flags struct {
	Controller, Token, CA string
	JSON                  bool
}

// IsConnFlag reports whether name is a connection flag that takes a value.
func IsConnFlag(name string) bool {
	return name == "--controller" || name == "--token" || name == "--ca"
}

// SetConn sets the connection flag name (one IsConnFlag accepts).
func (f *Flags) SetConn(name, value string) {
	switch name {
	case "--controller":
		f.Controller = value
	case "--token":
		f.Token = value
	case "--ca":
		f.CA = value
	}
}

// SplitArgs takes Parity's own flags out of an sbatch command line, up to
// the script; everything after the script belongs to the script. help
// reports -h, --help or --usage.
func SplitArgs(args []string) (f Flags, rest []string, help bool, err error) {
	argWords := jobspec.ArgWordsFunc()
	for i := 0; i < len(args); {
		w := args[i]
		name, value, attached := strings.Cut(w, "=")
		switch {
		case w == "--json":
			f.JSON = true
			i++
			continue
		case w == "-h" || w == "--help" || w == "--usage":
			return f, nil, true, nil
		case IsConnFlag(name):
			if !attached {
				if i+1 >= len(args) {
					return f, nil, false, fmt.Errorf("%s requires a value", name)
				}
				value = args[i+1]
				i++
			}
			f.SetConn(name, value)
			i++
			continue
		}
		n := argWords(args[i:])
		if n == 0 {
			return f, append(rest, args[i:]...), false, nil
		}
		rest = append(rest, args[i:i+n]...)
		i += n
	}
	return f, rest, false, nil
}

// Parse resolves the sbatch request from the command line (without
// Parity's flags), the environment and the script.
func Parse(env Env, args []string) (*jobspec.Request, error) {
	return parse(env, args, false)
}

// ParseStep parses srun's sbatch-style options for a step in an existing
// allocation (see jobspec.ParseOptions.InAllocation).
func ParseStep(env Env, args []string) (*jobspec.Request, error) {
	return parse(env, args, true)
}

func parse(env Env, args []string, inAllocation bool) (*jobspec.Request, error) {
	vars := map[string]string{}
	for _, kv := range env.Environ() {
		if k, v, ok := strings.Cut(kv, "="); ok {
			vars[k] = v
		}
	}
	wd, err := env.Getwd()
	if err != nil {
		return nil, fmt.Errorf("working directory: %w", err)
	}
	host, _ := env.Hostname()
	user := vars["USER"]
	if user == "" {
		user = vars["LOGNAME"]
	}
	// The cluster's MaxArraySize is the controller's to enforce, in its
	// words; the command line checks only what no cluster allows.
	return jobspec.Parse(nil, args, vars, jobspec.ParseOptions{
		Now: env.Now(), Location: env.Loc, User: user, SubmitHost: host, SubmitDir: wd, MaxArraySize: jobspec.MaxArraySizeCeiling,
		InAllocation: inAllocation,
		ReadScript:   func(path, workDir string) ([]byte, string, error) { return readScript(path, workDir, vars["PATH"]) },
		ReadStdin:    func() ([]byte, error) { return io.ReadAll(env.Stdin) },
		ReadFile:     os.ReadFile,
	})
}

// readScript finds the script as sbatch does: an absolute path, a path
// relative to the working directory, then (for a bare name) $PATH.
func readScript(path, workDir, searchPath string) (data []byte, found string, err error) {
	candidates := []string{path}
	if !filepath.IsAbs(path) {
		candidates = []string{filepath.Join(workDir, path)}
		if !strings.ContainsRune(path, '/') {
			for _, dir := range filepath.SplitList(searchPath) {
				if dir != "" {
					candidates = append(candidates, filepath.Join(dir, path))
				}
			}
		}
	}
	var first error
	for _, c := range candidates {
		b, err := os.ReadFile(c)
		if err == nil {
			if abs, err := filepath.Abs(c); err == nil {
				c = abs
			}
			return b, c, nil
		}
		if first == nil {
			first = err
		}
	}
	return nil, "", first
}

// FromStdin reports whether the request's script was read from standard
// input (no script path, no --wrap).
func FromStdin(req *jobspec.Request) bool { return req.ScriptPath == "" && req.Wrap == "" }

// ExitCode is the status submit's errors exit with: $SLURM_EXIT_ERROR when
// it is set, as sbatch does, and 1 otherwise.
func ExitCode(getenv func(string) string) int {
	if v, err := strconv.Atoi(getenv("SLURM_EXIT_ERROR")); err == nil && v > 0 && v < 256 {
		return v
	}
	return 1
}

// RedactToken hides the API token in what --parse-only prints, so that
// pasting the output into a ticket does not hand out the credential.
func RedactToken(req *jobspec.Request) *jobspec.Request {
	if _, ok := req.Env[clientenv.EnvToken]; !ok {
		return req
	}
	shown := *req
	shown.Env = maps.Clone(req.Env)
	shown.Env[clientenv.EnvToken] = "<redacted>"
	return &shown
}

// WriteParseOnly prints what --parse-only shows: the request with the
// token hidden, as JSON or one field a line.
func WriteParseOnly(w io.Writer, req *jobspec.Request, asJSON bool) error {
	shown := RedactToken(req)
	if asJSON {
		return WriteJSON(w, shown)
	}
	return writeRequestText(w, shown)
}

// WriteJSON writes v indented by two spaces, with a final newline, as
// every verb's --json does.
func WriteJSON(w io.Writer, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encode JSON: %w", err)
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// writeRequestText prints the resolved request one field a line, with
// where each value came from.
func writeRequestText(w io.Writer, req *jobspec.Request) error {
	b, err := json.Marshal(req)
	if err != nil {
		return err
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(b, &fields); err != nil {
		return err
	}
	keys := make([]string, 0, len(fields))
	for k := range fields {
		if k != "sources" && k != "warnings" && k != "env" {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	var out strings.Builder
	for _, k := range keys {
		line := fmt.Sprintf("%-18s %s", k, fields[k])
		if src := req.Sources[k]; src != "" {
			line += "  (" + src + ")"
		}
		out.WriteString(line + "\n")
	}
	fmt.Fprintf(&out, "%-18s %d variables (see --json)\n", "env", len(req.Env))
	_, err = io.WriteString(w, out.String())
	return err
}
