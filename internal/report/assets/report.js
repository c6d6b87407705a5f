// obsbench report: draws the charts from the data block. Everything is
// in this file: no network at view time. The charts are SVG laid out for
// the width they get, and drawn again when it changes: their labels are
// text a reader can select, and a browser test can check for overlaps.
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("obsbench-data").textContent);
  var SVG = "http://www.w3.org/2000/svg";
  var colors = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"];
  // A twin's colour: its line, its dots, and (lighter) the phases the
  // observer was in it.
  var twin = { a: "#1f77b4", b: "#e6550d" };
  var shade = { a: "rgba(31, 119, 180, 0.16)", b: "rgba(230, 85, 13, 0.18)", aa: "rgba(120, 120, 120, 0.14)" };

  function el(tag, attrs, parent) {
    var e = document.createElementNS(SVG, tag);
    for (var k in attrs) e.setAttribute(k, attrs[k]);
    if (parent) parent.appendChild(e);
    return e;
  }

  function label(parent, x, y, s, anchor, cls) {
    var t = el("text", { x: x, y: y, "text-anchor": anchor || "start", "class": "label" + (cls ? " " + cls : "") }, parent);
    t.textContent = s;
    return t;
  }

  function tip(parent, s) {
    el("title", {}, parent).textContent = s;
  }

  // newChart empties the chart's box and gives it an SVG of its width.
  function newChart(id) {
    var box = document.getElementById(id);
    if (!box) return null;
    box.textContent = "";
    var w = Math.max(200, box.clientWidth || 800);
    var svg = el("svg", { width: w, height: 10 }, box);
    return { box: box, svg: svg, w: w };
  }

  function legend(box, items) {
    var d = document.createElement("div");
    d.className = "legend";
    items.forEach(function (it) {
      var s = document.createElement("span");
      var sw = document.createElement("span");
      sw.className = "swatch";
      sw.style.background = it.color;
      s.appendChild(sw);
      s.appendChild(document.createTextNode(it.text));
      d.appendChild(s);
    });
    box.appendChild(d);
  }

  function niceStep(raw) {
    var p = Math.pow(10, Math.floor(Math.log10(raw || 1)));
    var n = raw / p;
    return (n < 1.5 ? 1 : n < 3.5 ? 2 : n < 7.5 ? 5 : 10) * p;
  }

  function overlaps(a, b) {
    return a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;
  }

  // ticks labels an axis at y with ticks[i] at x(ticks[i]): a label at
  // an end is kept inside the chart, and one that would run into the
  // last one kept is left out.
  function ticks(svg, w, values, x, y, fmt) {
    var last = null;
    values.forEach(function (v) {
      var t = label(svg, x(v), y, fmt(v), "middle", "tick");
      var b = t.getBBox();
      if (b.x < 0) {
        t.setAttribute("x", 0); t.setAttribute("text-anchor", "start");
      } else if (b.x + b.width > w) {
        t.setAttribute("x", w); t.setAttribute("text-anchor", "end");
      }
      b = t.getBBox();
      if (last && overlaps({ x: b.x - 6, y: b.y, width: b.width + 12, height: b.height }, last)) {
        t.remove();
        return;
      }
      last = b;
    });
  }

  // linearTicks are round values from lo to hi, about n of them, and
  // the decimals their step needs.
  function linearTicks(lo, hi, n) {
    var step = niceStep((hi - lo) / Math.max(1, n)), out = [];
    for (var t = Math.ceil(lo / step) * step; t <= hi + step * 1e-9; t += step) out.push(Math.abs(t) < step * 1e-9 ? 0 : t);
    out.decimals = Math.max(0, -Math.floor(Math.log10(step) + 1e-9));
    return out;
  }

  // Overhead per condition: the estimate as a bar, its interval as a
  // line, a paired condition's phases as dots, the noise floor shaded
  // around zero. Each row's name and figure are on a line above it, so
  // that a narrow page keeps the whole width for the scale.
  function overheadChart() {
    var rows = data.overheads, c = newChart("chart-overhead");
    if (!c || !rows || rows.length === 0) return;
    var svg = c.svg, pad = 8, lineH = 16, band = 24;
    var floor = data.noise_floor_pct || 0, lo = -floor, hi = floor;
    rows.forEach(function (r) {
      lo = Math.min(lo, r.ci_low, r.pct); hi = Math.max(hi, r.ci_high, r.pct);
      (r.phases || []).forEach(function (p) { lo = Math.min(lo, p.pct); hi = Math.max(hi, p.pct); });
    });
    lo = Math.min(lo, 0); hi = Math.max(hi, 0);
    var span = (hi - lo) || 1;
    lo -= span * 0.04; hi += span * 0.04;
    var x = function (v) { return pad + (v - lo) / (hi - lo) * (c.w - 2 * pad); };
    var y = 4, places = [];
    // Labels first: a figure that does not fit beside its name goes on
    // a line of its own.
    rows.forEach(function (r) {
      var name = label(svg, pad, y + 12, r.name);
      var fig = label(svg, c.w - pad, y + 12, r.pct.toFixed(1) + "% [" + r.ci_low.toFixed(1) + ", " + r.ci_high.toFixed(1) + "]", "end", "figure");
      if (name.getBBox().width + fig.getBBox().width + 16 > c.w - 2 * pad) {
        y += lineH;
        fig.setAttribute("y", y + 12);
      }
      places.push(y + lineH);
      y += lineH + band + 6;
    });
    var bottom = y;
    var bg = el("g", {}, svg);
    svg.insertBefore(bg, svg.firstChild);
    el("rect", { x: x(-floor), y: 0, width: Math.max(0, x(floor) - x(-floor)), height: bottom, fill: "#eee" }, bg);
    el("line", { x1: x(0), x2: x(0), y1: 0, y2: bottom, stroke: "#999" }, bg);
    rows.forEach(function (r, i) {
      var top = places[i], mid = top + band / 2;
      var phases = r.phases || [];
      var fill = r.significant ? (r.pct > 0 ? "#d62728" : "#2ca02c") : "#7f9fbf";
      el("rect", { x: Math.min(x(0), x(r.pct)), y: mid - (phases.length ? 3 : 7), width: Math.abs(x(r.pct) - x(0)), height: phases.length ? 6 : 14,
        fill: fill, "fill-opacity": phases.length ? 0.5 : 1 }, svg);
      phases.forEach(function (p, j) {
        var dot = el("circle", { cx: x(p.pct), cy: mid + ((j % 5) - 2) * 2.5, r: 3, fill: twin[p.on] || "#555", "fill-opacity": 0.65 }, svg);
        tip(dot, "run " + p.seq + " (round " + p.round + "): " + p.pct.toFixed(1) + "%, the observer in " + p.on);
      });
      var g = el("g", { stroke: "#222", "stroke-width": 1.5 }, svg);
      el("line", { x1: x(r.ci_low), x2: x(r.ci_high), y1: mid, y2: mid }, g);
      el("line", { x1: x(r.ci_low), x2: x(r.ci_low), y1: mid - 6, y2: mid + 6 }, g);
      el("line", { x1: x(r.ci_high), x2: x(r.ci_high), y1: mid - 6, y2: mid + 6 }, g);
      el("line", { x1: x(r.pct), x2: x(r.pct), y1: mid - 9, y2: mid + 9, "stroke-width": 2.5 }, g);
    });
    var tv = linearTicks(lo, hi, Math.floor((c.w - 2 * pad) / 90));
    ticks(svg, c.w, tv, x, bottom + 14, function (v) { return v.toFixed(tv.decimals) + "%"; });
    svg.setAttribute("height", bottom + 20);
    if (rows.some(function (r) { return (r.phases || []).length > 0; })) {
      var sides = (data.timeline && data.timeline.sides) || "twin";
      legend(c.box, [{ color: twin.a, text: "a phase, the observer in " + sides + " a" }, { color: twin.b, text: "in " + sides + " b" }, { color: "#eee", text: "noise floor" }]);
    }
  }

  // The experiment's paired phases on one clock: each twin's statements
  // per second (and its server's CPU), a segment per phase, each phase
  // shaded by the twin the observer was in.
  function timelineChart() {
    var tl = data.timeline, c = newChart("chart-timeline");
    if (!c || !tl || tl.phases.length === 0) return;
    var svg = c.svg, left = 52, right = 8, end = 0;
    tl.phases.forEach(function (p) { end = Math.max(end, p.start + Math.max(p.a.length, p.b.length)); });
    var x = function (t) { return left + t / (end || 1) * (c.w - left - right); };
    var panels = [{ title: "statements/s", a: "a", b: "b", h: 170, fmt: function (v) { return v.toFixed(0); } }];
    if (tl.cpu) panels.push({ title: "server CPU, CPUs", a: "a_cpu", b: "b_cpu", h: 110, fmt: function (v) { return v.toFixed(2); } });
    var y0 = 0;
    panels.forEach(function (pn) {
      var lo = Infinity, hi = -Infinity;
      tl.phases.forEach(function (p) { p[pn.a].concat(p[pn.b]).forEach(function (v) { lo = Math.min(lo, v); hi = Math.max(hi, v); }); });
      if (!(hi >= lo)) return;
      var pad = (hi - lo) * 0.08 || Math.max(1e-3, Math.abs(hi) * 0.05);
      lo -= pad; hi += pad;
      label(svg, left, y0 + 12, pn.title, "start", "panel");
      var top = y0 + 20, h = pn.h;
      var y = function (v) { return top + h - (v - lo) / (hi - lo) * h; };
      tl.phases.forEach(function (p) {
        var n = Math.max(p[pn.a].length, p[pn.b].length);
        var r = el("rect", { x: x(p.start), y: top, width: Math.max(1, x(p.start + n) - x(p.start)), height: h, fill: p.aa ? shade.aa : shade[p.on] }, svg);
        tip(r, p.condition + ", run " + p.seq + " (round " + p.round + "): " + (p.aa ? "no observer (A/A)" : "the observer in " + tl.sides + " " + p.on));
      });
      el("rect", { x: left, y: top, width: c.w - left - right, height: h, fill: "none", stroke: "#bbb" }, svg);
      var step = niceStep((hi - lo) / 4), last = null;
      for (var v = Math.ceil(lo / step) * step; v <= hi; v += step) {
        el("line", { x1: left - 3, x2: left, y1: y(v), y2: y(v), stroke: "#999" }, svg);
        var t = label(svg, left - 5, y(v) + 4, pn.fmt(v), "end", "tick");
        var b = t.getBBox();
        if (b.x < 0 || (last && overlaps(b, last))) t.remove(); else last = b;
      }
      ["a", "b"].forEach(function (side) {
        var key = side === "a" ? pn.a : pn.b;
        tl.phases.forEach(function (p) {
          var pts = p[key].map(function (v, i) { return x(p.start + i + 0.5).toFixed(1) + "," + y(v).toFixed(1); });
          if (pts.length > 1) el("polyline", { points: pts.join(" "), fill: "none", stroke: twin[side], "stroke-width": 1.5 }, svg);
          pts.forEach(function (pt) {
            var xy = pt.split(",");
            el("circle", { cx: xy[0], cy: xy[1], r: 1.8, fill: twin[side] }, svg);
          });
        });
      });
      y0 = top + h + 6;
    });
    var axis = y0 + 10;
    ticks(svg, c.w, linearTicks(0, end, Math.floor((c.w - left - right) / 90)), x, axis, function (v) { return v.toFixed(0); });
    label(svg, c.w - right, axis + 16, "seconds from the first phase", "end", "axis");
    svg.setAttribute("height", axis + 22);
    legend(c.box, [{ color: twin.a, text: tl.sides + " a" }, { color: twin.b, text: tl.sides + " b" },
      { color: shade.a, text: "observer in a" }, { color: shade.b, text: "observer in b" }, { color: shade.aa, text: "A/A" }]);
  }

  // Latency percentiles per condition on a log scale (p99.9 is often ten
  // times p50): a row per condition, a mark per percentile.
  function latencyChart() {
    var rows = data.latency, c = newChart("chart-latency");
    if (!c || !rows || rows.length === 0) return;
    var keys = ["p50", "p90", "p99", "p999"], names = ["p50", "p90", "p99", "p99.9"];
    var lo = Infinity, hi = 0;
    rows.forEach(function (r) { keys.forEach(function (k) { if (r[k] > 0) { lo = Math.min(lo, r[k]); hi = Math.max(hi, r[k]); } }); });
    if (!(hi > 0)) { c.box.textContent = ""; return; }
    var lmin = Math.floor(Math.log10(lo)), lmax = Math.ceil(Math.log10(hi));
    if (lmax === lmin) lmax++;
    var svg = c.svg, pad = 12, band = 16;
    var x = function (v) { return pad + (Math.log10(v) - lmin) / (lmax - lmin) * (c.w - 2 * pad); };
    var y = 4;
    for (var e = lmin; e <= lmax; e++) el("line", { x1: x(Math.pow(10, e)), x2: x(Math.pow(10, e)), y1: 0, y2: 16 + rows.length * (16 + band + 4), stroke: "#eee" }, svg);
    rows.forEach(function (r) {
      label(svg, pad, y + 12, r.name);
      var mid = y + 16 + band / 2;
      el("line", { x1: pad, x2: c.w - pad, y1: mid, y2: mid, stroke: "#ddd" }, svg);
      keys.forEach(function (k, j) {
        if (!(r[k] > 0)) return;
        var m = el("rect", { x: x(r[k]) - 4, y: mid - 6, width: 8, height: 12, fill: colors[j] }, svg);
        tip(m, r.name + " " + names[j] + ": " + r[k].toFixed(3) + " ms");
      });
      y += 16 + band + 4;
    });
    // Decades, and 2 and 5 between them where there are few.
    var tv = [];
    for (e = lmin; e <= lmax; e++) {
      tv.push(Math.pow(10, e));
      if (lmax - lmin <= 2 && e < lmax) tv.push(2 * Math.pow(10, e), 5 * Math.pow(10, e));
    }
    ticks(svg, c.w, tv, x, y + 12, function (v) { return (v < 1 ? String(+v.toPrecision(1)) : v.toFixed(0)) + " ms"; });
    svg.setAttribute("height", y + 18);
    legend(c.box, names.map(function (n, j) { return { color: colors[j], text: n }; }));
  }

  // Statements per second, second by second, every run of a condition as
  // a series; drag to zoom, double-click to reset (uPlot). Only runs long
  // enough for a series are in the data.
  var plots = [];
  function throughputCharts() {
    plots.forEach(function (u) { u.destroy(); });
    plots = [];
    (data.series || []).forEach(function (cond, ci) {
      var el = document.getElementById("chart-throughput-" + ci);
      if (!el || cond.runs.length === 0) return;
      var n = 0;
      cond.runs.forEach(function (r) { n = Math.max(n, r.per_second.length); });
      var xs = [];
      for (var i = 0; i < n; i++) xs.push(i);
      var series = [{ label: "second" }];
      var values = [xs];
      cond.runs.forEach(function (r, ri) {
        series.push({ label: r.label, stroke: colors[ri % colors.length], width: 1.5, points: { show: false } });
        var v = r.per_second.slice();
        while (v.length < n) v.push(null);
        values.push(v);
      });
      // An alternation run's on phases are shaded (one run per chart;
      // several runs have different schedules).
      var phases = cond.runs.length === 1 ? (cond.runs[0].on_phases || []) : [];
      plots.push(new uPlot({
        width: el.clientWidth || 800, height: 220, series: series,
        scales: { x: { time: false } },
        legend: { live: false },
        axes: [{ label: "second of the measured window" }, { label: "statements/s", size: 60 }],
        cursor: { drag: { x: true, y: false } },
        hooks: { drawClear: [function (u) {
          var ctx = u.ctx;
          ctx.save();
          ctx.fillStyle = "rgba(255, 165, 0, 0.15)";
          phases.forEach(function (p) {
            var x0 = u.valToPos(p[0], "x", true), x1 = u.valToPos(p[1] - 1, "x", true);
            ctx.fillRect(x0, u.bbox.top, Math.max(1, x1 - x0), u.bbox.height);
          });
          ctx.restore();
        }] }
      }, values, el));
    });
  }

  function drawAll() {
    overheadChart();
    timelineChart();
    latencyChart();
    throughputCharts();
  }

  drawAll();
  var width = window.innerWidth, pending = 0;
  window.addEventListener("resize", function () {
    if (window.innerWidth === width) return;
    width = window.innerWidth;
    clearTimeout(pending);
    pending = setTimeout(drawAll, 150);
  });
  document.body.setAttribute("data-charts-drawn", "true");
})();
