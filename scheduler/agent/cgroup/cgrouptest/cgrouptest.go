// Package cgrouptest holds what tests of device confinement share: the
// oracle that reads an open's outcome as the cgroup's answer.
package cgrouptest

// The oracle is the cgroup's answer, not the driver's: EPERM means the
// cgroup refused the open; success (a GPU host whose driver backs the
// number), ENODEV (no GPU has that minor) or ENXIO (no driver behind it)
// means the cgroup let it through.
const (
	Allowed = "allowed"
	EPERM   = "Operation not permitted"
)

// Verdict folds the outcomes of an open the cgroup allowed into Allowed;
// others (EPERM) are returned as they are. res is "opened" or the
// strerror text the probe printed.
func Verdict(res string) string {
	if res == "opened" || res == "No such device or address" || res == "No such device" {
		return Allowed
	}
	return res
}

// ProbeScript is a shell fragment that prints "path=opened" or
// "path=<strerror>" for each file in its arguments.
const ProbeScript = `for f in "$@"; do
	if err=$( (exec 3<"$f") 2>&1 ); then echo "$f=opened"; else echo "$f=${err##*: }"; fi
done
`
