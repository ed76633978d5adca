package conformance

import (
	"fmt"
	"strconv"
	"strings"

	g "github.com/onsi/ginkgo/v2"
	gm "github.com/onsi/gomega"
)

// partitionProbed is the partition probe's report, failing the spec when
// there is none, with the job's slice.
func (e *Env) partitionProbed() (*probeOnce, splitNode, string) {
	s := e.partitioned()
	p := e.partitionProbe(s)
	if p.fail != "" {
		e.Failf("%s", p.fail)
	}
	held := AllocOn(p.job, s.node).GetDevices()
	if len(held) != 1 {
		e.Failf("the partition probe holds %d devices, want one slice: %s", len(held), describeJob(p.job))
	}
	e.Evidence("env", fmt.Sprintf("job %d on %s holding %s saw: env %v", p.job.GetId(), s.node, held[0], p.rep.Env), p.rep.Open)
	return p, s, held[0]
}

// specPartitionDeviceFiles: the slice's files (a MIG device's parent node
// and its GPU- and compute-instance capability nodes; an AMD partition's
// render node) and the shared ones open; every other device file of the
// node — other slices', other GPUs' — is refused.
func specPartitionDeviceFiles(e *Env) {
	p, s, slice := e.partitionProbed()
	if len(p.files) == 0 {
		g.Skip("the target does not expose " + s.node + "'s device files")
	}
	held := map[string]bool{}
	for _, f := range s.byUUID[slice].Files {
		held[f.Path] = true
	}
	for _, f := range s.inv.SharedFiles {
		held[f.Path] = true
	}
	var bad []string
	allowed, denied := 0, 0
	for _, f := range p.files {
		res := p.rep.Open[f.Path]
		switch {
		case held[f.Path] && permitted(res):
			allowed++
		case !held[f.Path] && res == "EPERM":
			denied++
		default:
			bad = append(bad, fmt.Sprintf("%s: %s (the slice's: %v)", f, res, held[f.Path]))
		}
	}
	e.Observe("slice_files_open", strconv.FormatBool(allowed == len(held)))
	e.Observe("other_files_refused", strconv.FormatBool(denied == len(p.files)-len(held)))
	e.Expect(denied).To(gm.BeNumerically(">", 0), "no other device file of %s was tried", s.node)
	e.Expect(bad).To(gm.BeEmpty(), "device files of %s for a job holding slice %s:\n%s", s.node, slice, strings.Join(bad, "\n"))
}

// specPartitionVisibleDevices: each visible-devices variable names the
// one slice, by its UUID (a MIG device) or as ordinal 0 (an AMD
// partition, which the device cgroup leaves ROCr as its only GPU).
func specPartitionVisibleDevices(e *Env) {
	vars := e.Vendor.Info.VisibleDevicesEnv
	if len(vars) == 0 {
		e.Failf("driver %s names no visible-devices variable (vendors.Info.VisibleDevicesEnv)", e.Vendor.Info.Name)
	}
	p, _, slice := e.partitionProbed()
	one := true
	for _, v := range vars {
		got, ok := p.rep.Env[v]
		e.Expect(ok).To(gm.BeTrue(), "%s is not set in the job", v)
		e.Expect(got).To(gm.BeElementOf(slice, "0"), "%s in a job holding slice %s", v, slice)
		one = one && (got == slice || got == "0")
	}
	e.Observe("names_the_one_slice", strconv.FormatBool(one))
}
