package chaos

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
)

// holdsDevices reports whether a job in state still holds its devices.
func holdsDevices(state string) bool {
	switch state {
	case "RUNNING", "COMPLETING", "SUSPENDED":
		return true
	}
	return false
}

// sharedGPUs returns, for every GPU that two or more jobs hold at once in
// the controller's view (the jobs' allocations and the nodes' GPU
// holders), a line naming the GPU and the jobs, sorted.
func sharedGPUs(jobs []*pb.Job, nodes []*pb.Node) []string {
	holders := map[string][]uint64{}
	hold := func(uuid string, id uint64) {
		if !slices.Contains(holders[uuid], id) {
			holders[uuid] = append(holders[uuid], id)
		}
	}
	for _, j := range jobs {
		if !holdsDevices(j.GetState()) {
			continue
		}
		for _, a := range j.GetAlloc() {
			for _, uuid := range a.GetDevices() {
				hold(uuid, j.GetId())
			}
		}
	}
	for _, n := range nodes {
		for _, g := range n.GetGpus() {
			if g.GetJobId() != 0 {
				hold(g.GetUuid(), g.GetJobId())
			}
		}
	}
	var out []string
	for uuid, ids := range holders {
		if len(ids) > 1 {
			slices.Sort(ids)
			out = append(out, fmt.Sprintf("GPU %s held by jobs %v", uuid, ids))
		}
	}
	sort.Strings(out)
	return out
}

// gpuScript is a GPU job that holds a lock per GPU it was given while it
// runs: a lock another job already holds means the agents ran two jobs
// on one GPU, whatever the controller's view says. The job appends
// "JOBID NODE GPU" to DIR/conflicts then.
func gpuScript(lockDir string, seconds int) string {
	return fmt.Sprintf(`#!/bin/sh
for g in $(echo "$SLURM_JOB_GPUS" | tr , ' '); do
  ( flock -n -E 99 %[1]s/"$SLURMD_NODENAME.$g" sleep %[2]d
    [ $? = 99 ] && echo "$SLURM_JOB_ID $SLURMD_NODENAME $g" >> %[1]s/conflicts ) &
done
wait
`, lockDir, seconds)
}

// lockConflicts reads the lines GPU jobs wrote to DIR/conflicts.
func lockConflicts(lockDir string) []string {
	b, err := os.ReadFile(filepath.Join(lockDir, "conflicts"))
	if err != nil {
		return nil
	}
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if l != "" {
			out = append(out, "job "+l+": the GPU's lock was held by another job")
		}
	}
	return out
}
