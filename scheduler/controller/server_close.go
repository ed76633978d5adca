package controller

import (
	"context"
	"time"
)

// Close stops serving (in-flight calls end), stops the writer after it
// answered every op it took, and closes the store.
func (c *Controller) Close() error {
	var err error
	c.stopOnce.Do(func() {
		c.handOffLeadership()
		if c.cancel != nil {
			c.cancel()
		}
		for _, n := range c.nodesSnapshot() {
			n.orders.close()
		}
		if c.grpc != nil {
			stopped := make(chan struct{})
			go func() { c.grpc.GracefulStop(); close(stopped) }()
			select {
			case <-stopped:
			case <-time.After(5 * time.Second):
				c.grpc.Stop()
			}
		}
		if c.api != nil {
			// As GracefulStop: submissions in flight get their answer.
			sctx, scancel := context.WithTimeout(context.Background(), 5*time.Second)
			if c.api.Shutdown(sctx) != nil {
				c.api.Close()
			}
			scancel()
			c.mux.close()
		}
		if c.http != nil {
			c.http.Close()
		}
		close(c.stopping)
		c.wg.Wait()
		if c.repl != nil {
			// After the writer: no commit waits on raft any more.
			if rerr := c.repl.node.Close(); rerr != nil {
				c.log.Error("stop replica", "err", rerr)
			}
		}
		if c.ledgerCh != nil {
			close(c.ledgerCh)
			<-c.ledgerDone
			if lerr := c.opts.Ledger.Close(); lerr != nil {
				c.log.Error("close ledger", "err", lerr)
			}
		}
		err = c.store.close()
	})
	return err
}
