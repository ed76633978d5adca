package sbatch

import "slices"

// SlurmRelease is the Slurm release whose command line Parity's
// Slurm-named commands follow (options, output layouts, exit codes).
const SlurmRelease = "22.05.8"

// VersionLine is what a Slurm-named command prints for --version: Slurm's
// "slurm 22.05.8", which tools parse to learn what they talk to, followed
// by Parity's own version.
func VersionLine(parityVersion string) string {
	return "slurm " + SlurmRelease + " (parity " + parityVersion + ")"
}

// AsksVersion reports whether a Slurm command's arguments ask only for its
// version: --version or -V first (scontrol also takes "version").
func AsksVersion(name string, args []string) bool {
	if len(args) == 0 {
		return false
	}
	return slices.Contains([]string{"--version", "-V"}, args[0]) || name == "scontrol" && args[0] == "version"
}
