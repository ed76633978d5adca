package launch

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"

	"golang.org/x/sys/unix"

	"github.com/parityhpc/parity/vendors"
)

// filesDir holds the files drivers give a job (vendors.Prepared.Files),
// apart from the spool's own files.
const filesDir = "files"

var (
	fileNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)
	envNameRE  = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
)

// checkFiles refuses driver files a job could not be given as asked: a
// name that is not a plain base name, a bad variable, or two files
// sharing a name or a variable. A driver (or an adapter) that sends one
// fails the job's start with the reason, not the agent.
func checkFiles(files []vendors.File) error {
	names, vars := map[string]bool{}, map[string]bool{}
	for _, f := range files {
		switch {
		case !fileNameRE.MatchString(f.Name):
			return fmt.Errorf("driver file %q: the name is not a plain file name (letters, digits, '.', '_', '-'; at most 64)", f.Name)
		case !envNameRE.MatchString(f.Env):
			return fmt.Errorf("driver file %q: variable %q is not a variable name", f.Name, f.Env)
		case names[f.Name]:
			return fmt.Errorf("driver file %q is given twice", f.Name)
		case vars[f.Env]:
			return fmt.Errorf("driver file %q: variable %s already names another file", f.Name, f.Env)
		}
		names[f.Name], vars[f.Env] = true, true
	}
	return nil
}

// writeFiles writes the drivers' files into the job's directory, readable
// by the job (the spool directory lets others through, not list), and
// sets each file's variable in the job's environment.
func writeFiles(dir string, spec *Spec) error {
	files := spec.Prepared.Files
	if len(files) == 0 {
		return nil
	}
	if err := checkFiles(files); err != nil {
		return fmt.Errorf("launch: job %d: %w", spec.JobID, err)
	}
	sub := filepath.Join(dir, filesDir)
	if err := os.Mkdir(sub, 0o711); err != nil && !os.IsExist(err) {
		return fmt.Errorf("launch: job %d: %w", spec.JobID, err)
	}
	if spec.Prepared.Env == nil {
		spec.Prepared.Env = map[string]string{}
	}
	for _, f := range files {
		path := filepath.Join(sub, f.Name)
		if err := writeReadable(path, f.Content); err != nil {
			return fmt.Errorf("launch: job %d: driver file %s: %w", spec.JobID, f.Name, err)
		}
		spec.Prepared.Env[f.Env] = path
	}
	return nil
}

func writeReadable(path string, content []byte) error {
	fd, err := unix.Open(path, unix.O_WRONLY|unix.O_CREAT|unix.O_TRUNC|unix.O_CLOEXEC, 0o644)
	if err != nil {
		return &os.PathError{Op: "open", Path: path, Err: err}
	}
	defer unix.Close(fd)
	if err := unix.Fchmod(fd, 0o644); err != nil { // the agent's umask may narrow it
		return &os.PathError{Op: "chmod", Path: path, Err: err}
	}
	for len(content) > 0 {
		n, err := unix.Write(fd, content)
		if err != nil {
			return &os.PathError{Op: "write", Path: path, Err: err}
		}
		content = content[n:]
	}
	return nil
}
