package cgroup

import "github.com/parityhpc/parity/scheduler/agent/ctlfile"

// Control files go through ctlfile's plain system calls.
func readControl(path string) ([]byte, error) { return ctlfile.Read(path) }

func writeFile(path, value string) error { return ctlfile.Write(path, value) }
