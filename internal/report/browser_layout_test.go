package report_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// layoutWidths are the widths a report must read at: a laptop's window
// and a phone's.
var layoutWidths = []int{1280, 390}

// layoutScript finds what a reader would see as broken on the page as
// the browser laid it out, each problem a line:
//
//   - a word broken mid-word: a run of letters or digits (a word cut at
//     its hyphens or slashes, where a line may end) whose text range has
//     boxes on more than one line;
//   - text outside its box: a cell, or a paragraph, heading, list item or
//     legend entry not inside a box that scrolls on purpose, whose
//     content is wider than it (scrollWidth over clientWidth); and a page
//     wider than the window;
//   - chart labels that overlap: the boxes of two labels of one chart
//     (its SVG text and its legend's entries) intersect, or a label
//     sticks out of its chart; and the same for the text a script drew
//     on a canvas (an axis's values and title), as canvasLabels recorded
//     it.
const layoutScript = `
var out = [];
function where(e) {
	var c = e.closest("[id]");
	return e.tagName.toLowerCase() + (c ? " in #" + c.id : "") + " (" + JSON.stringify((e.textContent || "").trim().slice(0, 60)) + ")";
}
function scrolls(e) {
	for (var p = e.parentElement; p && p !== document.body; p = p.parentElement) {
		var o = getComputedStyle(p).overflowX;
		if (o === "auto" || o === "scroll") return true;
	}
	return false;
}
if (document.documentElement.scrollWidth > window.innerWidth + 1) {
	out.push("the page is " + document.documentElement.scrollWidth + " px wide in a window of " + window.innerWidth);
}
var walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT, {acceptNode: function (n) {
	var p = n.parentElement;
	return p && !p.closest("script, style, title, svg") ? NodeFilter.FILTER_ACCEPT : NodeFilter.FILTER_REJECT;
}});
var words = /[^\s\-\/]+[\-\/]*/g, broken = 0;
for (var n = walk.nextNode(); n; n = walk.nextNode()) {
	var m;
	words.lastIndex = 0;
	while ((m = words.exec(n.data)) !== null) {
		var r = document.createRange();
		r.setStart(n, m.index);
		r.setEnd(n, m.index + m[0].length);
		var lines = {};
		Array.prototype.forEach.call(r.getClientRects(), function (b) { if (b.width > 0) lines[Math.round(b.bottom)] = true; });
		if (Object.keys(lines).length > 1 && broken++ < 20) {
			out.push("the word " + JSON.stringify(m[0]) + " is broken over " + Object.keys(lines).length + " lines: " + where(n.parentElement));
		}
	}
}
document.querySelectorAll("td, th, p, li, h1, h2, h3, .legend > span").forEach(function (e) {
	if (e.getClientRects().length === 0) return;
	var cell = e.tagName === "TD" || e.tagName === "TH";
	if ((cell || !scrolls(e)) && e.scrollWidth > e.clientWidth + 1) {
		out.push("text runs out of its box, " + e.scrollWidth + " px in " + e.clientWidth + ": " + where(e));
	}
});
// Boxes with left, right, top and bottom, half a pixel of rounding let
// through.
function outside(a, f) {
	return a.left < f.left - 0.5 || a.right > f.right + 0.5 || a.top < f.top - 0.5 || a.bottom > f.bottom + 0.5;
}
function overlap(a, b) {
	return a.left < b.right - 0.5 && b.left < a.right - 0.5 && a.top < b.bottom - 0.5 && b.top < a.bottom - 0.5;
}
document.querySelectorAll(".chart").forEach(function (c) {
	var labels = Array.prototype.slice.call(c.querySelectorAll("svg text, .legend > span"));
	var boxes = labels.map(function (e) { return e.getBoundingClientRect(); });
	var frame = c.getBoundingClientRect();
	labels.forEach(function (a, i) {
		var ba = boxes[i];
		if (ba.width === 0) return;
		var svg = a.closest("svg"), f = svg ? svg.getBoundingClientRect() : frame;
		if (outside(ba, f)) {
			out.push("a label sticks out of its chart: " + where(a));
		}
		for (var j = i + 1; j < labels.length; j++) {
			var bb = boxes[j];
			if (bb.width > 0 && overlap(ba, bb)) {
				out.push("labels overlap: " + where(a) + " and " + where(labels[j]));
			}
		}
	});
});
(window.__canvasLabels || []).forEach(function (c) {
	var name = "canvas in #" + ((c.canvas.closest("[id]") || {}).id || "?");
	var f = {left: 0, top: 0, right: c.canvas.clientWidth, bottom: c.canvas.clientHeight};
	if (f.right === 0) return;
	c.labels.forEach(function (a, i) {
		if (outside(a, f)) {
			out.push("a label sticks out of its chart: " + JSON.stringify(a.text) + " " + name);
		}
		for (var j = i + 1; j < c.labels.length; j++) {
			var b = c.labels[j];
			if (overlap(a, b)) {
				out.push("labels overlap: " + JSON.stringify(a.text) + " and " + JSON.stringify(b.text) + " " + name);
			}
		}
	});
});
return out;`

// canvasLabels runs before a page's own scripts and records, for each
// canvas, the box of every text drawn on it since it was last cleared
// whole (a chart redrawn at a new size clears it first), in CSS pixels
// from the canvas's top left corner: the box the text's own glyphs take
// (measureText's actual bounding box at the alignment and baseline it
// was drawn with), through the context's transform (a y axis's title is
// drawn turned).
const canvasLabels = `
window.__canvasLabels = [];
(function () {
	var P = CanvasRenderingContext2D.prototype, fill = P.fillText, clear = P.clearRect;
	function entry(canvas) {
		for (var i = 0; i < window.__canvasLabels.length; i++) {
			if (window.__canvasLabels[i].canvas === canvas) return window.__canvasLabels[i];
		}
		var e = {canvas: canvas, labels: []};
		window.__canvasLabels.push(e);
		return e;
	}
	P.clearRect = function (x, y, w, h) {
		var t = this.getTransform(), c = this.canvas;
		if (t.isIdentity && x <= 0 && y <= 0 && x + w >= c.width && y + h >= c.height) entry(c).labels = [];
		return clear.apply(this, arguments);
	};
	P.fillText = function (text, x, y) {
		var m = this.measureText(text), t = this.getTransform(), c = this.canvas;
		var sx = c.clientWidth ? c.clientWidth / c.width : 1, sy = c.clientHeight ? c.clientHeight / c.height : 1;
		var xs = [], ys = [];
		[[x - m.actualBoundingBoxLeft, y - m.actualBoundingBoxAscent], [x + m.actualBoundingBoxRight, y - m.actualBoundingBoxAscent],
			[x - m.actualBoundingBoxLeft, y + m.actualBoundingBoxDescent], [x + m.actualBoundingBoxRight, y + m.actualBoundingBoxDescent]].forEach(function (p) {
			var q = t.transformPoint(new DOMPoint(p[0], p[1]));
			xs.push(q.x * sx);
			ys.push(q.y * sy);
		});
		if (String(text).trim() !== "") {
			entry(c).labels.push({text: String(text), left: Math.min.apply(null, xs), right: Math.max.apply(null, xs),
				top: Math.min.apply(null, ys), bottom: Math.max.apply(null, ys)});
		}
		return fill.apply(this, arguments);
	};
})();`

// openAt loads page in the session's window at width px and waits for
// its charts to be drawn.
func openAt(t *testing.T, wd webDriver, session, page string, width int) {
	t.Helper()
	wd.call(t, "POST", "/session/"+session+"/window/rect", map[string]any{"width": width, "height": 1000})
	wd.call(t, "POST", "/session/"+session+"/url", map[string]any{"url": "file://" + page})
	var got struct {
		Drawn bool `json:"drawn"`
		Width int  `json:"width"`
	}
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		raw := wd.call(t, "POST", "/session/"+session+"/execute/sync", map[string]any{"args": []any{}, "script": `
			return {drawn: document.body.getAttribute("data-charts-drawn") === "true", width: window.innerWidth};`})
		if err := json.Unmarshal(raw, &got); err != nil {
			t.Fatal(err)
		}
		if got.Drawn || time.Now().After(deadline) {
			break
		}
	}
	if !got.Drawn {
		t.Fatalf("at %d px the page's script never finished drawing", width)
	}
	if got.Width != width {
		t.Fatalf("the window is %d px wide; asked for %d", got.Width, width)
	}
	checkConsole(t, wd, session)
}

// checkConsole fails t for each error the page's scripts logged.
func checkConsole(t *testing.T, wd webDriver, session string) {
	t.Helper()
	var logs []struct{ Level, Message string }
	json.Unmarshal(wd.call(t, "POST", "/session/"+session+"/se/log", map[string]any{"type": "browser"}), &logs)
	for _, l := range logs {
		if l.Level == "SEVERE" {
			t.Errorf("the page logged an error: %s", l.Message)
		}
	}
}

// checkLayout fails t for each problem layoutScript finds on page at
// each of layoutWidths.
func checkLayout(t *testing.T, wd webDriver, session, page string) {
	t.Helper()
	for _, w := range layoutWidths {
		for _, p := range layoutProblems(t, wd, session, page, w) {
			t.Errorf("at %d px: %s", w, p)
		}
	}
}

// layoutProblems are the problems layoutScript finds on page at width
// px.
func layoutProblems(t *testing.T, wd webDriver, session, page string, width int) []string {
	t.Helper()
	openAt(t, wd, session, page, width)
	var problems []string
	if err := json.Unmarshal(wd.call(t, "POST", "/session/"+session+"/execute/sync", map[string]any{"args": []any{}, "script": layoutScript}), &problems); err != nil {
		t.Fatal(err)
	}
	return problems
}

// brokenPage has one of each problem the layout checks look for: a word
// broken mid-word in a narrow cell, text running out of its box, and two
// chart labels over each other.
const brokenPage = `<!DOCTYPE html><html><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<style>td { overflow-wrap: anywhere; width: 30px; } .box { width: 60px; white-space: nowrap; overflow: hidden; }</style></head>
<body data-charts-drawn="true">
<table><tr><td>baseline</td><td>slower</td></tr></table>
<p class="box">text that runs out of its box</p>
<div class="chart" id="chart-broken"><svg width="200" height="40"><text x="10" y="20">overhead</text><text x="30" y="20">label</text></svg></div>
<div class="chart" id="chart-canvas"><canvas width="200" height="60"></canvas></div>
<script>
var ctx = document.querySelector("#chart-canvas canvas").getContext("2d");
ctx.font = "12px sans-serif";
ctx.clearRect(0, 0, 200, 60);
ctx.fillText("10,000", 10, 30);
ctx.fillText("20,000", 30, 30);
ctx.translate(5, 50);
ctx.rotate(-Math.PI / 2);
ctx.fillText("statements/s", 0, 0);
</script>
</body></html>`

// The layout checks fail a page laid out as the first report was: a word
// broken in a table cell, text out of its box, labels over each other.
func TestLayoutChecksFailInChromium(t *testing.T) {
	if testing.Short() {
		t.Skip("drives a real browser: second tier, not run with -short (which needs no packages)")
	}
	page := filepath.Join(t.TempDir(), "broken.html")
	if err := os.WriteFile(page, []byte(brokenPage), 0o644); err != nil {
		t.Fatal(err)
	}
	wd := startChromeDriver(t)
	session := wd.newSession(t)
	t.Cleanup(func() { wd.call(t, "DELETE", "/session/"+session, nil) })
	for _, w := range layoutWidths {
		got := strings.Join(layoutProblems(t, wd, session, page, w), "\n")
		for _, want := range []string{`the word "baseline" is broken`, "text runs out of its box", "labels overlap: text in #chart-broken",
			`labels overlap: "10,000" and "20,000" canvas in #chart-canvas`, `a label sticks out of its chart: "statements/s" canvas in #chart-canvas`} {
			if !strings.Contains(got, want) {
				t.Errorf("at %d px the checks miss %q; they found:\n%s", w, want, got)
			}
		}
	}
}
