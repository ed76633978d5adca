package conformance

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// CgroupReport is what `conform probe cgroup` prints from inside a job:
// the groups the process is in and, when it is in a cgroup v2 (unified)
// hierarchy only, the interface files of its group and of each group
// above it up to its job's.
type CgroupReport struct {
	// Lines are /proc/self/cgroup's lines ("0::/path" on a v2 host;
	// one "N:controllers:/path" per v1 hierarchy besides).
	Lines []string `json:"lines"`
	// Unified is the v2 group's path when the process is in no v1
	// hierarchy ("" otherwise).
	Unified string `json:"unified"`
	// Groups holds, by path, the files that exist of the process's group
	// and of its ancestors up to the job's group (job_$SLURM_JOB_ID), or
	// only its own where no ancestor is the job's.
	Groups map[string]map[string]string `json:"groups,omitempty"`
}

// cgroupFiles are the v2 interface files a job's limits show in.
var cgroupFiles = []string{"cgroup.controllers", "memory.max", "cpuset.cpus", "cpuset.cpus.effective", "cpuset.mems.effective"}

func probeCgroup(args []string, stdout io.Writer) error {
	if len(args) != 0 {
		return fmt.Errorf("cgroup takes no arguments")
	}
	rep, err := readCgroup("/proc/self/cgroup", "/sys/fs/cgroup", os.Getenv("SLURM_JOB_ID"))
	if err != nil {
		return err
	}
	return json.NewEncoder(stdout).Encode(rep)
}

// readCgroup reads the process's groups from procFile and, in a v2-only
// hierarchy, the files of its groups under mount up to job's group.
func readCgroup(procFile, mount, job string) (CgroupReport, error) {
	f, err := os.Open(procFile)
	if err != nil {
		return CgroupReport{}, err
	}
	defer f.Close()
	rep := CgroupReport{Lines: []string{}}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); l != "" {
			rep.Lines = append(rep.Lines, l)
		}
	}
	if err := sc.Err(); err != nil {
		return CgroupReport{}, err
	}
	if len(rep.Lines) != 1 || !strings.HasPrefix(rep.Lines[0], "0::") {
		return rep, nil
	}
	rep.Unified = strings.TrimPrefix(rep.Lines[0], "0::")
	rep.Groups = map[string]map[string]string{}
	jobDir := "job_" + job
	for p := rep.Unified; ; p = path.Dir(p) {
		files := map[string]string{}
		for _, name := range cgroupFiles {
			if b, err := os.ReadFile(filepath.Join(mount, p, name)); err == nil {
				files[name] = strings.TrimSpace(string(b))
			}
		}
		rep.Groups[p] = files
		if path.Base(p) == jobDir || p == "/" || p == "." {
			break
		}
	}
	if !slices.Contains(strings.Split(rep.Unified, "/"), jobDir) {
		rep.Groups = map[string]map[string]string{rep.Unified: rep.Groups[rep.Unified]}
	}
	return rep, nil
}

// jobGroup is the path of job id's group among the report's groups ("" if
// none).
func (r CgroupReport) jobGroup(id uint64) string {
	for p := range r.Groups {
		if path.Base(p) == fmt.Sprintf("job_%d", id) {
			return p
		}
	}
	return ""
}
