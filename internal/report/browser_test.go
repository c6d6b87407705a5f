package report_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image/png"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/obsbench/obsbench/internal/report"
	"github.com/obsbench/obsbench/internal/result"
)

// The report opened in headless Chromium from a file URL, with the network
// off, draws every chart: each SVG chart has its shapes, each canvas
// painted pixels, not merely exists. It reads at a laptop's and a phone's
// width (checkLayout: no word broken, no text out of its box, no chart
// labels over each other), for an experiment of alternation and rounds
// and for a duet. Chromium is driven over WebDriver by ChromeDriver
// (Debian packages chromium and chromium-driver, which make test
// installs). The README's screenshot is of a real default run's report,
// not of this one.
func TestReportDrawsInChromium(t *testing.T) {
	if testing.Short() {
		t.Skip("drives a real browser: second tier, not run with -short (which needs no packages)")
	}
	s, runs := recorded(t)
	page := writePage(t, s, runs)
	wd, session, painted := drawn(t, page)
	// A per-second chart for each condition with runs long enough for a
	// series (its alternation runs).
	var ids []string
	for _, c := range s.Conditions {
		for _, r := range runs {
			if r.Condition == c.Name && len(r.Driver.PerSecond) > 0 && len(r.Driver.PerSecond[0]) >= 10 {
				ids = append(ids, "chart-throughput-"+strconv.Itoa(len(ids)))
				break
			}
		}
	}
	if len(ids) == 0 {
		t.Fatal("the recorded experiment has no run long enough for a per-second chart")
	}
	checkDrawn(t, painted, ids)
	checkShapes(t, wd, session, "chart-overhead", "chart-latency")

	var shot string
	json.Unmarshal(wd.call(t, "GET", "/session/"+session+"/screenshot", nil), &shot)
	img, err := base64.StdEncoding.DecodeString(shot)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := png.Decode(bytes.NewReader(img)); err != nil {
		t.Fatalf("screenshot is not a PNG: %v", err)
	}
	checkLayout(t, wd, session, page)

	s, runs = duetRecorded(t)
	page = writePage(t, s, runs)
	openAt(t, wd, session, page, 1280)
	checkShapes(t, wd, session, "chart-overhead", "chart-timeline", "chart-latency")
	checkLayout(t, wd, session, page)
}

// writePage writes the report of s and runs to a file and returns its
// path.
func writePage(t *testing.T, s result.Summary, runs []result.Run) string {
	t.Helper()
	page := filepath.Join(t.TempDir(), "report.html")
	var b bytes.Buffer
	if err := report.HTML(&b, s, runs); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(page, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return page
}

// checkShapes fails t for each SVG chart of ids with fewer than 5 shapes
// drawn.
func checkShapes(t *testing.T, wd webDriver, session string, ids ...string) {
	t.Helper()
	for _, id := range ids {
		var n int
		json.Unmarshal(wd.call(t, "POST", "/session/"+session+"/execute/sync", map[string]any{"args": []any{id}, "script": `
			var c = document.getElementById(arguments[0]);
			return c ? c.querySelectorAll("svg rect, svg circle, svg line, svg polyline").length : 0;`}), &n)
		if n < 5 {
			t.Errorf("chart %s not drawn: %d shapes", id, n)
		}
	}
}

// The load sweep's page draws a latency-against-load chart per
// condition in Chromium, offline, as the experiment's report does.
func TestLoadSweepDrawsInChromium(t *testing.T) {
	if testing.Short() {
		t.Skip("drives a real browser: second tier, not run with -short (which needs no packages)")
	}
	dir := t.TempDir()
	rec := report.SweepRecord{Workload: "tpcb-like", Loads: []float64{25, 90}, Points: report.LoadSweepPointsForTest()}
	if err := report.WriteLoadSweepHTMLFile(dir, rec); err != nil {
		t.Fatal(err)
	}
	_, _, painted := drawn(t, filepath.Join(dir, "report.html"))
	checkDrawn(t, painted, []string{"chart-load-0"})
}

// drawn opens page in headless Chromium with the network off and waits
// for its script to finish drawing; it returns the session, and the
// pixels painted on each canvas by the id of the canvas or of the chart
// around it. It fails t when the page fetched anything.
func drawn(t *testing.T, page string) (webDriver, string, map[string]int) {
	t.Helper()
	wd := startChromeDriver(t)
	session := wd.newSession(t)
	t.Cleanup(func() { wd.call(t, "DELETE", "/session/"+session, nil) })
	wd.call(t, "POST", "/session/"+session+"/url", map[string]any{"url": "file://" + page})

	var canvases []struct {
		ID      string `json:"id"`
		Width   int    `json:"width"`
		Painted int    `json:"painted"`
	}
	var state struct {
		Drawn     bool `json:"drawn"`
		Resources int  `json:"resources"`
		Canvases  json.RawMessage
	}
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		raw := wd.call(t, "POST", "/session/"+session+"/execute/sync", map[string]any{"args": []any{}, "script": `
			var out = [];
			document.querySelectorAll("canvas").forEach(function (c) {
				var d = c.getContext("2d").getImageData(0, 0, c.width, c.height).data, n = 0;
				for (var i = 3; i < d.length; i += 4) if (d[i] !== 0) n++;
				out.push({id: c.id || c.parentElement.closest("[id]").id, width: c.width, painted: n});
			});
			return {drawn: document.body.getAttribute("data-charts-drawn") === "true",
				resources: performance.getEntriesByType("resource").length, canvases: out};`})
		if err := json.Unmarshal(raw, &state); err != nil {
			t.Fatal(err)
		}
		if state.Drawn || time.Now().After(deadline) {
			break
		}
	}
	if !state.Drawn {
		t.Fatal("the page's script never finished drawing")
	}
	checkConsole(t, wd, session)
	json.Unmarshal(state.Canvases, &canvases)
	if state.Resources != 0 {
		t.Errorf("the page fetched %d resources; it must need none", state.Resources)
	}
	painted := map[string]int{}
	for _, c := range canvases {
		painted[c.ID] = max(painted[c.ID], c.Painted)
	}
	return wd, session, painted
}

// checkDrawn fails t for each chart of ids with too few painted pixels.
func checkDrawn(t *testing.T, painted map[string]int, ids []string) {
	t.Helper()
	for _, id := range ids {
		if painted[id] <= 500 {
			t.Errorf("chart %s not drawn (canvases: %v)", id, painted)
		}
	}
}

type webDriver struct{ base string }

// startChromeDriver runs chromedriver on a free loopback port until the
// test ends.
func startChromeDriver(t *testing.T) webDriver {
	t.Helper()
	bin, err := exec.LookPath("chromedriver")
	if err != nil {
		t.Fatalf("chromedriver not found (make test installs Debian's chromium-driver): %v", err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cmd := exec.Command(bin, "--port="+strconv.Itoa(port), "--allowed-ips=127.0.0.1")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	wd := webDriver{base: fmt.Sprintf("http://127.0.0.1:%d", port)}
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if resp, err := http.Get(wd.base + "/status"); err == nil {
			resp.Body.Close()
			return wd
		}
	}
	t.Fatal("chromedriver did not start within 20s")
	return wd
}

// newSession starts headless Chromium with every network request sent to
// a proxy that does not exist and every name unresolvable: the network is
// off for the page. Its pages record the text drawn on their canvases
// (canvasLabels).
func (wd webDriver) newSession(t *testing.T) string {
	t.Helper()
	raw := wd.call(t, "POST", "/session", map[string]any{"capabilities": map[string]any{"alwaysMatch": map[string]any{
		"browserName": "chrome",
		"goog:chromeOptions": map[string]any{
			"binary": "/usr/bin/chromium",
			"args": []string{"--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1200,2000",
				"--proxy-server=127.0.0.1:9", "--proxy-bypass-list=<-loopback>", "--host-resolver-rules=MAP * ~NOTFOUND",
				"--user-data-dir=" + t.TempDir()},
		},
	}}})
	var s struct {
		SessionID string `json:"sessionId"`
	}
	if err := json.Unmarshal(raw, &s); err != nil || s.SessionID == "" {
		t.Fatalf("new session: %s %v", raw, err)
	}
	// The text a page's scripts draw on canvases is recorded for
	// layoutScript (canvasLabels), from the first script of every page on.
	wd.call(t, "POST", "/session/"+s.SessionID+"/goog/cdp/execute", map[string]any{
		"cmd": "Page.addScriptToEvaluateOnNewDocument", "params": map[string]any{"source": canvasLabels}})
	return s.SessionID
}

// call makes a WebDriver request and returns its value.
func (wd webDriver) call(t *testing.T, method, path string, body any) json.RawMessage {
	t.Helper()
	var rd *bytes.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	} else {
		rd = bytes.NewReader(nil)
	}
	req, _ := http.NewRequest(method, wd.base+path, rd)
	req.Header.Set("Content-Type", "application/json")
	client := &http.Client{Timeout: 60 * time.Second}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	var out struct {
		Value json.RawMessage `json:"value"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%s %s: %s: %s", method, path, resp.Status, out.Value)
	}
	return out.Value
}
