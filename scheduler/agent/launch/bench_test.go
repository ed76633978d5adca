package launch

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/parityhpc/parity/gres"
	"github.com/parityhpc/parity/scheduler/accounting"
	"github.com/parityhpc/parity/vendors"
)

// BenchmarkLaunchTrueJob runs 1-GPU `true` batch jobs, eight at a time as
// on an 8-GPU node, through the real supervisor and cgroups: as root, the
// agent's share of the 1,000-task array in `parity lab bench`, and as
// another user, as on a real cluster. Besides the wall time a job, it
// reports the host's CPU a job (every process: runtime, supervisor and
// the job's shell), read from /proc/stat, which is the figure that bounds
// the array on a small machine.
func BenchmarkLaunchTrueJob(b *testing.B) {
	b.Run("root", func(b *testing.B) { benchLaunch(b, "root", 0, 0, []uint32{0}) }) // groups as the user database gives root's
	b.Run("other-user", func(b *testing.B) { benchLaunch(b, "nobody", nobodyUID, nobodyGID, []uint32{nobodyGID}) })
}

func benchLaunch(b *testing.B, user string, uid, gid uint32, groups []uint32) {
	// The spool on tmpfs, as the agent's default /run/parity is.
	spool, err := os.MkdirTemp("/dev/shm", "parity-bench-")
	if err != nil {
		b.Skipf("skipped: no /dev/shm for the spool: %v", err)
	}
	b.Cleanup(func() { os.RemoveAll(spool) })
	e := newEnv(b, requireCgroups(b), func(c *Config) { c.SpoolDir = spool })
	gpu := vendors.Prepared{Env: map[string]string{"CUDA_VISIBLE_DEVICES": "0"}, DeviceFiles: []gres.DeviceFile{
		{Path: "/dev/nvidiactl", Major: 195, Minor: 255}, {Path: "/dev/nvidia-uvm", Major: 510, Minor: 0},
		{Path: "/dev/nvidia2", Major: 195, Minor: 2}}}
	const inFlight = 8
	slots := make(chan struct{}, inFlight)
	ended := make(chan error, 1)
	go func() {
		for range b.N {
			end := <-e.rt.Events()
			if end.State != accounting.StateCompleted {
				ended <- &benchEndError{end}
				return
			}
			<-slots
		}
		ended <- nil
	}()
	busy0 := hostBusyTicks(b)
	b.ResetTimer()
	for i := range b.N {
		slots <- struct{}{}
		s := e.spec(uint64(i+1), "true\n")
		s.User, s.UID, s.GID, s.Groups = user, uid, gid, groups
		s.Output = "/dev/null"
		s.CPUs = mustCPUs(b, strconv.Itoa(i%2))
		s.MemoryBytes = 100 << 20
		s.AddPrepared(gpu)
		if err := e.rt.Launch(context.Background(), s); err != nil {
			b.Fatal(err)
		}
	}
	if err := <-ended; err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	b.ReportMetric(float64(hostBusyTicks(b)-busy0)*10/float64(b.N), "host-cpu-ms/job")
}

type benchEndError struct{ end JobEnd }

func (e *benchEndError) Error() string {
	return "job " + strconv.FormatUint(e.end.JobID, 10) + " ended " + string(e.end.State) + ": " + e.end.Reason
}

// hostBusyTicks is the host's non-idle CPU time in USER_HZ ticks (10 ms).
func hostBusyTicks(b *testing.B) int64 {
	raw, err := os.ReadFile("/proc/stat")
	if err != nil {
		b.Fatal(err)
	}
	line, _, _ := strings.Cut(string(raw), "\n")
	var busy int64
	for i, f := range strings.Fields(line)[1:] {
		if i == 3 || i == 4 || i >= 8 { // idle, iowait; guest time is already in user
			continue
		}
		n, _ := strconv.ParseInt(f, 10, 64)
		busy += n
	}
	return busy
}
