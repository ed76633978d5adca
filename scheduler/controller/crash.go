package controller

// Crash stops the controller as a power cut would, for labs and fault
// tests in one process: with several controllers its raft stops first,
// without handing the leadership off or a word to its peers, so commits
// in flight fail and the others elect a leader after a heartbeat timeout;
// then everything else stops as in Close. Close is the planned stop.
func (c *Controller) Crash() error {
	if c.repl != nil {
		if err := c.repl.node.Close(); err != nil {
			c.log.Error("crash: stop replica", "err", err)
		}
	}
	return c.Close()
}
