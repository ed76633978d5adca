package main

import "testing"

func TestEveryVerbHasHelp(t *testing.T) {
	root := newRootCmd(nil, nil)
	for _, c := range root.Commands() {
		if c.Short == "" {
			t.Errorf("verb %q has no short help", c.Name())
		}
	}
}
