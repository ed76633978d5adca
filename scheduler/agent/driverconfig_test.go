package agent

import (
	"strings"
	"testing"
	"time"
)

func TestParseNodeConfig(t *testing.T) {
	const good = `drivers:
  - name: cpu
    settings:
      hostname: n1
      root: /srv/snap
  - name: acc
  - plugin: unix:///run/parity/acme.sock
    connectTimeout: 2s
    callTimeout: 500ms
    reconnect: {min: 250ms, max: 8s}
    flap: {restarts: 3, window: 2m}
`
	c, err := ParseNodeConfig("agent.yaml", []byte(good))
	if err != nil {
		t.Fatal(err)
	}
	in := c.InTree()
	if len(in) != 2 || in[0].Name != "cpu" || string(in[0].Settings) != `{"hostname":"n1","root":"/srv/snap"}` || in[1].Settings != nil {
		t.Fatalf("in-tree entries %+v", in)
	}
	ps := c.Plugins()
	want := PluginPolicy{Target: "unix:///run/parity/acme.sock", ConnectTimeout: 2 * time.Second, CallTimeout: 500 * time.Millisecond,
		ProbeInterval: 10 * time.Second, ReconnectMin: 250 * time.Millisecond, ReconnectMax: 8 * time.Second,
		FlapRestarts: 3, FlapWindow: 2 * time.Minute}
	if len(ps) != 1 || ps[0] != want {
		t.Fatalf("plugins %+v, want %+v", ps, want)
	}
	if c.Drivers[2].Line != 7 {
		t.Errorf("plugin entry line %d, want 7", c.Drivers[2].Line)
	}

	tests := []struct{ name, src, want string }{
		{"both kinds in one entry", "drivers:\n  - name: cpu\n    plugin: unix:///a.sock\n",
			`agent.yaml:2: drivers[0]: name "cpu" and plugin "unix:///a.sock": an entry is an in-tree driver or an adapter, not both`},
		{"neither", "drivers:\n  - settings: {a: 1}\n", `agent.yaml:2: drivers[0]: give name`},
		{"a misspelt key names its line", "drivers:\n  - name: cpu\n  - plugin: unix:///a.sock\n    conectTimeout: 1s\n",
			`agent.yaml:3: drivers[1]: line 4: field conectTimeout not found`},
		{"a bad duration names the field", "drivers:\n  - plugin: unix:///a.sock\n    callTimeout: soon\n",
			`drivers[0]: plugin unix:///a.sock: callTimeout: "soon" is not a positive duration`},
		{"backoff upside down", "drivers:\n  - plugin: unix:///a.sock\n    reconnect: {min: 10s, max: 1s}\n",
			`reconnect.max 1s is below reconnect.min 10s`},
		{"not a unix socket", "drivers:\n  - plugin: tcp://host:1\n", `plugin "tcp://host:1": want unix:///path.sock`},
		{"an adapter attached twice", "drivers:\n  - plugin: unix:///a.sock\n  - plugin: unix:///a.sock\n",
			`agent.yaml:3: drivers[1]: plugin unix:///a.sock is attached by drivers[0] already`},
		{"timeouts on an in-tree driver", "drivers:\n  - name: cpu\n    callTimeout: 1s\n", `driver cpu: timeouts, reconnect and flap apply to plugin entries only`},
		{"a flap limit of no restarts", "drivers:\n  - plugin: unix:///a.sock\n    flap: {restarts: 0}\n", `flap.restarts: 0 is not a count of at least 1`},
		{"a flap window that is no duration", "drivers:\n  - plugin: unix:///a.sock\n    flap: {restarts: 2, window: often}\n", `flap.window: "often" is not a positive duration`},
		{"settings that are not a mapping", "drivers:\n  - name: cpu\n    settings: [1, 2]\n", `agent.yaml:2: drivers[0]: driver cpu: settings: want a mapping`},
		{"settings on a plugin", "drivers:\n  - plugin: unix:///a.sock\n    settings: {a: 1}\n", `settings belong to the adapter's own configuration`},
		{"an unknown top-level key", "driver:\n  - name: cpu\n", `field driver not found`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseNodeConfig("agent.yaml", []byte(tt.src))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err %v, want one containing %s", err, tt.want)
			}
		})
	}
}

func TestParseNodeConfigEmpty(t *testing.T) {
	c, err := ParseNodeConfig("agent.yaml", nil)
	if err != nil || len(c.Drivers) != 0 {
		t.Fatalf("an empty file: %+v, %v; want no drivers (the in-tree defaults)", c, err)
	}
}
