package reports

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
)

// File names WriteFolder uses.
const (
	HTMLFile  = "report.html"
	JSONFile  = "report.json"
	JUnitFile = "junit.xml"
)

// Paths are the files WriteFolder wrote.
type Paths struct {
	HTML, JSON, JUnit string
}

// WriteFolder renders the run as report.html, report.json and junit.xml in
// dir (created if missing). Every report is rendered before anything is
// written, and each file is replaced atomically (temporary file, fsync,
// rename), so a reader never sees half a report and a rendering error
// leaves the previous reports in place.
func WriteFolder(dir string, r *Run, opts HTMLOptions) (Paths, error) {
	if err := r.Validate(); err != nil {
		return Paths{}, err
	}
	var html, js, junit bytes.Buffer
	if err := WriteHTML(&html, r, opts); err != nil {
		return Paths{}, err
	}
	if err := WriteJSON(&js, r); err != nil {
		return Paths{}, err
	}
	if err := WriteJUnit(&junit, r); err != nil {
		return Paths{}, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return Paths{}, fmt.Errorf("reports: create report dir %q: %w", dir, err)
	}
	p := Paths{HTML: filepath.Join(dir, HTMLFile), JSON: filepath.Join(dir, JSONFile), JUnit: filepath.Join(dir, JUnitFile)}
	for _, f := range []struct {
		path string
		data []byte
	}{{p.JSON, js.Bytes()}, {p.JUnit, junit.Bytes()}, {p.HTML, html.Bytes()}} {
		if err := writeAtomic(f.path, f.data); err != nil {
			return Paths{}, err
		}
	}
	return p, nil
}

func writeAtomic(path string, data []byte) (err error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("reports: write %q: %w", path, err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if _, err = tmp.Write(data); err != nil {
		return fmt.Errorf("reports: write %q: %w", path, err)
	}
	if err = tmp.Chmod(0o644); err != nil {
		return fmt.Errorf("reports: chmod %q: %w", path, err)
	}
	if err = tmp.Sync(); err != nil {
		return fmt.Errorf("reports: sync %q: %w", path, err)
	}
	if err = tmp.Close(); err != nil {
		return fmt.Errorf("reports: close %q: %w", path, err)
	}
	if err = os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("reports: rename into %q: %w", path, err)
	}
	return nil
}
