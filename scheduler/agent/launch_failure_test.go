package agent

import (
	"errors"
	"fmt"
	"testing"
)

// A launch failed by its devices' adapter being down is reported as the
// node's fault; any other failure as the job's.
func TestLaunchFailureNamesAnAdapterDown(t *testing.T) {
	down := fmt.Errorf("%w: unix:///run/acme.sock: dial unix /run/acme.sock: connect: no such file or directory", ErrAdapterDown)
	for _, c := range []struct {
		err  error
		want string
	}{
		{fmt.Errorf("agent: job 2: prepare acme devices: %w", down), stateLaunchFailedDevices},
		{fmt.Errorf("agent: job 2: prepare acme devices: %w", errors.New("device GPU-1 is not ours")), stateLaunchFailed},
		{errors.New("agent: job 2: user nobody2 unknown"), stateLaunchFailed},
	} {
		if got := launchFailure(c.err); got != c.want {
			t.Errorf("launchFailure(%v) = %s, want %s", c.err, got, c.want)
		}
	}
}
