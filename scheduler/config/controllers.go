package config

import (
	"fmt"
	"net"
	"strconv"
)

// MaxControllers bounds the controllers: list: every commit waits for a
// majority, so more voters only slow commits down.
const MaxControllers = 7

// controllers checks the controllers: list (host:port each, no repeats).
func (p *parser) controllers(list []string) []string {
	if len(list) > MaxControllers {
		p.errorf("controllers", "%d controllers listed; at most %d (3 or 5 is usual: a majority must acknowledge every change)", len(list), MaxControllers)
	}
	seen := map[string]bool{}
	for i, a := range list {
		field := fmt.Sprintf("controllers[%d]", i)
		host, port, err := net.SplitHostPort(a)
		if err != nil || host == "" {
			p.errorf(field, "%q is not host:port", a)
			continue
		}
		if n, err := strconv.Atoi(port); err != nil || n <= 0 || n > 65535 {
			p.errorf(field, "%q: port %q is not a number from 1 to 65535", a, port)
			continue
		}
		if seen[a] {
			p.errorf(field, "%q is listed twice", a)
		}
		seen[a] = true
	}
	return list
}
