package reports

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// hostileRun adds text an attacker or a confused driver could put into a
// result: markup, quotes and URLs in names, reasons, evidence and labels.
func hostileRun() *Run {
	r := sampleRun()
	r.Specs = append(r.Specs,
		SpecResult{ID: "isolation/<script>", Area: AreaIsolation, Name: `<script>alert("name")</script>`, Vendor: "nvidia",
			Status: StatusFailed, Reason: `"><img src=https://evil.example/x.png>`,
			Evidence: []Evidence{{Kind: "log", Text: "see https://docs.example/err and <a href=\"//evil.example\">here</a>",
				Data: map[string]string{"<b>": `'onmouseover='alert(1)`}}}},
		SpecResult{ID: "isolation/<script>", Area: AreaIsolation, Name: `<script>alert("name")</script>`, Vendor: "amd",
			Status: StatusSkipped, Reason: `<iframe src="http://evil.example"></iframe>`},
	)
	r.Timeline = append(r.Timeline, Event{Time: at(20 * time.Minute), Node: `gpu-"n01"<x>`, Kind: EventFault, Text: `<style>@import url(https://evil.example/a.css)</style>`})
	r.Series[0].GPU = `0"><svg onload=alert(1)>`
	return r
}

// tagRE finds start tags. Text and attribute values in our output never
// hold a raw '<' or '>' (they are escaped), so this finds real tags only.
var tagRE = regexp.MustCompile(`<([a-zA-Z][a-zA-Z0-9:-]*)((?:[^>"']|"[^"]*"|'[^']*')*)>`)

// attrRE finds attributes and their values inside a tag.
var attrRE = regexp.MustCompile(`([a-zA-Z_:][a-zA-Z0-9_:.-]*)\s*=\s*("[^"]*"|'[^']*'|[^\s"'>]+)`)

var styleRE = regexp.MustCompile(`(?is)<style[^>]*>(.*?)</style>`)

// externalRefs returns every construct in page that could make a browser
// fetch something from elsewhere or run code: external URLs in any
// attribute that loads or links, CSS url()/@import, scripts, frames,
// images, objects and event handler attributes.
func externalRefs(page string) []string {
	var bad []string
	for _, tag := range tagRE.FindAllStringSubmatch(page, -1) {
		switch strings.ToLower(tag[1]) {
		case "script", "iframe", "img", "object", "embed", "frame", "video", "audio", "source", "base":
			bad = append(bad, tag[0])
		}
		for _, a := range attrRE.FindAllStringSubmatch(tag[2], -1) {
			name, v := strings.ToLower(a[1]), strings.ToLower(strings.Trim(a[2], `"'`))
			switch {
			case strings.HasPrefix(name, "on"):
				bad = append(bad, tag[0])
			case name == "style" && (strings.Contains(v, "url(") || strings.Contains(v, "@import")):
				bad = append(bad, tag[0])
			case name == "src" || name == "href" || name == "xlink:href" || name == "action" || name == "srcset" ||
				name == "poster" || name == "data" || name == "formaction":
				if strings.HasPrefix(v, "http:") || strings.HasPrefix(v, "https:") || strings.HasPrefix(v, "//") ||
					strings.HasPrefix(v, "ftp:") || strings.HasPrefix(v, "file:") || strings.HasPrefix(v, "javascript:") {
					bad = append(bad, tag[0])
				}
			}
		}
	}
	for _, css := range styleRE.FindAllStringSubmatch(page, -1) {
		if strings.Contains(css[1], "url(") || strings.Contains(css[1], "@import") {
			bad = append(bad, "<style> with url() or @import")
		}
	}
	return bad
}

func TestHTMLSelfContained(t *testing.T) {
	for name, r := range map[string]*Run{"sample": sampleRun(), "hostile": hostileRun()} {
		t.Run(name, func(t *testing.T) {
			var b bytes.Buffer
			if err := WriteHTML(&b, r, HTMLOptions{Previous: previousRun(), Now: t0}); err != nil {
				t.Fatal(err)
			}
			page := b.String()
			if bad := externalRefs(page); len(bad) > 0 {
				t.Errorf("page references external resources: %q", bad)
			}
			if !strings.Contains(page, "<svg") || !strings.Contains(page, "<style>") {
				t.Error("page lacks inline SVG or inline CSS")
			}
		})
	}
	// The harness itself must catch a reference, or the test cannot fail.
	for _, page := range []string{
		`<link rel="stylesheet" href="https://cdn.example/x.css">`,
		`<p><img src=//x/y></p>`,
		`<svg><use xlink:href='http://x/y#a'/></svg>`,
		`<style>body{background:url(a.png)}</style>`,
		`<div onclick="go()">`,
		`<script>1</script>`,
	} {
		if len(externalRefs(page)) == 0 {
			t.Errorf("externalRefs misses the reference in %s", page)
		}
	}
	if bad := externalRefs(`<p title="a &gt; b">see https://x.example/ and &lt;img src=//x&gt;</p><a href="#r-1">x</a><link rel="icon" href="data:,">`); len(bad) > 0 {
		t.Errorf("externalRefs flags text or internal links: %q", bad)
	}
}

func TestHTMLEscapesResultText(t *testing.T) {
	var b bytes.Buffer
	if err := WriteHTML(&b, hostileRun(), HTMLOptions{}); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, want := range []string{
		"&lt;script&gt;alert(&#34;name&#34;)&lt;/script&gt;", // spec name, text context
		"&lt;iframe src=", // skip reason
		"see https://docs.example/err and &lt;a href=", // evidence text stays readable
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks escaped %q", want)
		}
	}
}

func TestHTMLContent(t *testing.T) {
	var b bytes.Buffer
	if err := WriteHTML(&b, sampleRun(), HTMLOptions{Now: time.Date(2026, 3, 14, 6, 30, 0, 0, time.UTC)}); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, want := range []string{
		`title="skipped: lab has no RAS fault injection for this preset"`, // skip reason on the matrix cell
		`<a href="#r-isolation-visible-devices-amd">✗</a>`,                // failing cell links to its evidence
		`id="r-isolation-visible-devices-amd"`,
		"ROCR_VISIBLE_DEVICES=0,1,2",                      // evidence text
		`vendors differ on <code>visible</code>`,          // parity evidence, side by side
		`<tr class="differs">`,                            // the differing row is marked
		"rendered 2026-03-14 06:30:00 UTC",                // injected clock
		"XID 79: GPU fallen off the bus",                  // fault in the timeline
		"GPU 1 drained: fatal-condition xid 79",           // drain window on the GPU charts
		`aria-label="Utilisation"`, `aria-label="Health"`, // per-GPU charts
		"gpu-n01 <small>nvidia h100 · 2 GPUs</small>",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if strings.Count(page, `<polyline`) < 8 {
		t.Errorf("expected a line per GPU in utilisation and temperature charts, got %d polylines", strings.Count(page, "<polyline"))
	}
}

// chromiumBinary finds Debian's chromium (package "chromium") or Ubuntu's
// name for it.
func chromiumBinary() string {
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// renderInChromium loads a file in headless Chromium with networking
// disabled and console logging on stderr; it returns the serialised DOM and
// the console problems it logged.
func renderInChromium(t *testing.T, bin, file string) (dom string, problems []string) {
	t.Helper()
	tmp := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
		"--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--host-resolver-rules=MAP * ~NOTFOUND", // any fetch fails loudly instead of leaving the machine
		"--user-data-dir="+filepath.Join(tmp, "profile"), "--enable-logging=stderr", "--v=0",
		"--dump-dom", "file://"+file)
	cmd.Env = append(os.Environ(), "HOME="+tmp)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium: %v\nstderr:\n%s", err, stderr.String())
	}
	for _, line := range strings.Split(stderr.String(), "\n") {
		if strings.Contains(line, "CONSOLE") || strings.Contains(line, "Uncaught") || strings.Contains(line, "Failed to load resource") {
			problems = append(problems, line)
		}
	}
	return stdout.String(), problems
}

func TestHTMLRendersInChromium(t *testing.T) {
	bin := chromiumBinary()
	if bin == "" {
		t.Skip("SKIPPED LOUDLY: no chromium on PATH, so the report page was not rendered in a browser; " +
			"install Debian's chromium package (apt-get install -y chromium) to run this test")
	}
	dir := t.TempDir()
	paths, err := WriteFolder(dir, hostileRun(), HTMLOptions{Previous: previousRun(), Now: t0})
	if err != nil {
		t.Fatal(err)
	}
	dom, problems := renderInChromium(t, bin, paths.HTML)
	if len(problems) > 0 {
		t.Errorf("chromium logged console problems:\n%s", strings.Join(problems, "\n"))
	}
	for _, want := range []string{`id="matrix"`, `id="timeline"`, "<svg", "<polyline", "New failures (3)"} {
		if !strings.Contains(dom, want) {
			t.Errorf("rendered DOM lacks %q (%d bytes of DOM)", want, len(dom))
		}
	}

	// The same harness must notice a broken page, or the check above
	// could never fail.
	broken := filepath.Join(dir, "broken.html")
	page := `<!doctype html><html><head><link rel="stylesheet" href="https://cdn.example/x.css"></head><body><script>notDefined()</script></body></html>`
	if err := os.WriteFile(broken, []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, problems := renderInChromium(t, bin, broken); len(problems) == 0 {
		t.Error("a page with a script error and an external stylesheet logged no console problems: the check is blind")
	}
}
