package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/parityhpc/parity/topology"
)

func runParity(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), append([]string{"parity"}, args...), &out, &errb)
	return out.String(), errb.String(), code
}

func TestDevicesSimJSON(t *testing.T) {
	tests := []struct {
		template, vendor, typ, linkKind string
		numaOfBest                      int // NUMA nodes the best 4 span
	}{
		{"dgx-h100", "nvidia", "h100", "nvlink", 1},
		{"dgx-a100", "nvidia", "a100", "nvlink", 2},
		{"mi300x", "amd", "mi300x", "xgmi", 2},
	}
	for _, tt := range tests {
		t.Run(tt.template, func(t *testing.T) {
			out, errOut, code := runParity(t, "devices", "--sim", tt.template, "--root", t.TempDir(), "--json")
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			var v devicesView
			if err := json.Unmarshal([]byte(out), &v); err != nil {
				t.Fatalf("bad JSON: %v\n%s", err, out)
			}
			if len(v.Devices) != 8 {
				t.Fatalf("got %d devices, want 8", len(v.Devices))
			}
			if v.Host == nil {
				t.Fatal("no host section")
			}
			for _, d := range v.Devices {
				if d.Vendor != tt.vendor || d.Type != tt.typ {
					t.Errorf("device %d: vendor/type %s/%s, want %s/%s", d.Index, d.Vendor, d.Type, tt.vendor, tt.typ)
				}
				if len(d.Links) != 7 || string(d.Links[0].Kind) != tt.linkKind {
					t.Errorf("device %d: %d links of kind %v, want 7 %s peers", d.Index, len(d.Links), d.Links, tt.linkKind)
				}
				numaCPUs := numaCPUsOf(v.Host.NUMA, d.NUMANode)
				if d.LocalCPUs.IsEmpty() || !d.LocalCPUs.Equal(numaCPUs) {
					t.Errorf("device %d: local CPUs %s, want its NUMA node %d's %s", d.Index, d.LocalCPUs, d.NUMANode, numaCPUs)
				}
				if len(d.Files) == 0 {
					t.Errorf("device %d has no device files", d.Index)
				}
			}
			if len(v.Islands) != 1 {
				t.Errorf("islands = %v, want one fast-link island", v.Islands)
			}
			if v.Best == nil || len(v.Best.Devices) != 4 || v.Best.Islands != 1 || len(v.Best.NUMANodes) != tt.numaOfBest {
				t.Errorf("best 4 = %+v, want 4 devices on one island over %d NUMA node(s)", v.Best, tt.numaOfBest)
			}
		})
	}
}

func numaCPUsOf(nodes []topology.NUMANode, id int) topology.CPUSet {
	for _, n := range nodes {
		if n.ID == id {
			return n.CPUs
		}
	}
	return topology.CPUSet{}
}

func TestDevicesTableAndErrors(t *testing.T) {
	out, errOut, code := runParity(t, "devices", "--sim", "dgx-h100")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"/dev/nvidia3 (195:3)", "nvlink→", "Best 4 h100 for one job: devices 0,1,2,3 — 1 island(s), NUMA node(s) 0"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	out, _, code = runParity(t, "devices", "--sim", "cpu")
	if code != 0 || !strings.Contains(out, "No accelerators found.") || !strings.Contains(out, "NUMA nodes 2") {
		t.Errorf("cpu template: exit %d\n%s", code, out)
	}
	_, errOut, code = runParity(t, "devices", "--sim", "dgx-z900")
	if code == 0 || !strings.Contains(errOut, `"dgx-z900"`) || !strings.Contains(errOut, "dgx-h100") {
		t.Errorf("unknown template: exit %d, stderr %q should name the value and the known templates", code, errOut)
	}
}

func TestDevicesOnThisHostNeverFails(t *testing.T) {
	// A host without GPUs must still report its CPUs and say which drivers found nothing.
	out, errOut, code := runParity(t, "devices", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var v devicesView
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatal(err)
	}
	if v.Host == nil || v.Host.CPUs.Count() == 0 {
		t.Errorf("host CPUs missing: %+v", v.Host)
	}
	if len(v.Devices) == 0 && len(v.Skipped) == 0 {
		t.Error("no devices and no skipped drivers: the output must say why nothing was found")
	}
}
