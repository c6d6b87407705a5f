// obsbench report: draws the charts from the data block. Everything is
// in this file: no network at view time.
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("obsbench-data").textContent);
  var colors = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"];

  function setupCanvas(canvas, height) {
    var w = canvas.parentElement.clientWidth || 800;
    var ratio = window.devicePixelRatio || 1;
    canvas.width = w * ratio;
    canvas.height = height * ratio;
    canvas.style.width = w + "px";
    canvas.style.height = height + "px";
    var ctx = canvas.getContext("2d");
    ctx.scale(ratio, ratio);
    return { ctx: ctx, w: w, h: height };
  }

  // Overhead per condition: a bar for the estimate, a whisker for its
  // interval, the noise floor shaded around zero.
  function overheadChart() {
    var rows = data.overheads;
    var canvas = document.getElementById("chart-overhead");
    if (!canvas || rows.length === 0) return;
    var rowH = 34, top = 24, left = 230, right = 30;
    var c = setupCanvas(canvas, top + rows.length * rowH + 30);
    var ctx = c.ctx;
    var lo = 0, hi = 0;
    rows.forEach(function (r) { lo = Math.min(lo, r.ci_low, r.pct); hi = Math.max(hi, r.ci_high, r.pct); });
    var floor = data.noise_floor_pct || 0;
    lo = Math.min(lo, -floor) - 2; hi = Math.max(hi, floor) + 2;
    var x = function (v) { return left + (v - lo) / (hi - lo) * (c.w - left - right); };
    ctx.fillStyle = "#eee";
    ctx.fillRect(x(-floor), top - 10, x(floor) - x(-floor), rows.length * rowH + 10);
    ctx.strokeStyle = "#999";
    ctx.beginPath(); ctx.moveTo(x(0), top - 10); ctx.lineTo(x(0), top + rows.length * rowH); ctx.stroke();
    ctx.font = "12px sans-serif";
    rows.forEach(function (r, i) {
      var y = top + i * rowH;
      ctx.fillStyle = "#222";
      ctx.textAlign = "right";
      ctx.fillText(r.name, left - 8, y + rowH / 2 + 4);
      ctx.fillStyle = r.significant ? (r.pct > 0 ? "#d62728" : "#2ca02c") : "#7f9fbf";
      ctx.fillRect(Math.min(x(0), x(r.pct)), y + 8, Math.abs(x(r.pct) - x(0)), rowH - 16);
      ctx.strokeStyle = "#222";
      ctx.beginPath();
      ctx.moveTo(x(r.ci_low), y + rowH / 2); ctx.lineTo(x(r.ci_high), y + rowH / 2);
      ctx.moveTo(x(r.ci_low), y + 10); ctx.lineTo(x(r.ci_low), y + rowH - 10);
      ctx.moveTo(x(r.ci_high), y + 10); ctx.lineTo(x(r.ci_high), y + rowH - 10);
      ctx.stroke();
      ctx.textAlign = "left";
      ctx.fillStyle = "#222";
      var label = r.pct.toFixed(1) + "% [" + r.ci_low.toFixed(1) + ", " + r.ci_high.toFixed(1) + "]";
      var lw = ctx.measureText(label).width;
      // Right of the whisker when it fits, else left of it.
      var lx = x(r.ci_high) + 6 + lw < c.w ? x(r.ci_high) + 6 : Math.max(left, x(r.ci_low) - 6 - lw);
      ctx.fillText(label, lx, y + rowH / 2 + 4);
    });
    ctx.textAlign = "center";
    ctx.fillStyle = "#555";
    var step = niceStep((hi - lo) / 8);
    for (var t = Math.ceil(lo / step) * step; t <= hi; t += step) {
      ctx.fillText(t.toFixed(0) + "%", x(t), top + rows.length * rowH + 18);
    }
  }

  function niceStep(raw) {
    var p = Math.pow(10, Math.floor(Math.log10(raw || 1)));
    var n = raw / p;
    return (n < 1.5 ? 1 : n < 3.5 ? 2 : n < 7.5 ? 5 : 10) * p;
  }

  // Statements per second, second by second, every run of a condition as
  // a series; drag to zoom, double-click to reset (uPlot).
  function throughputCharts() {
    data.series.forEach(function (cond, ci) {
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
      new uPlot({
        width: el.clientWidth || 800, height: 220, series: series,
        scales: { x: { time: false } },
        axes: [{ label: "second of the measured window" }, { label: "statements/s", size: 70 }],
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
      }, values, el);
    });
  }

  // Latency percentiles per condition, as grouped bars on a log scale
  // (p99.9 is often ten times p50).
  function latencyChart() {
    var rows = data.latency;
    var canvas = document.getElementById("chart-latency");
    if (!canvas || rows.length === 0) return;
    var keys = ["p50", "p90", "p99", "p999"], names = ["p50", "p90", "p99", "p99.9"];
    var c = setupCanvas(canvas, 280);
    var ctx = c.ctx, left = 70, bottom = 60, top = 20;
    var lo = Infinity, hi = 0;
    rows.forEach(function (r) { keys.forEach(function (k) { if (r[k] > 0) { lo = Math.min(lo, r[k]); hi = Math.max(hi, r[k]); } }); });
    if (!(hi > 0)) return;
    var lmin = Math.floor(Math.log10(lo)), lmax = Math.ceil(Math.log10(hi));
    if (lmax === lmin) lmax++;
    var y = function (v) { return c.h - bottom - (Math.log10(v) - lmin) / (lmax - lmin) * (c.h - bottom - top); };
    var gw = (c.w - left - 20) / rows.length, bw = gw * 0.8 / keys.length;
    ctx.font = "11px sans-serif";
    ctx.strokeStyle = "#999";
    ctx.beginPath(); ctx.moveTo(left, top); ctx.lineTo(left, c.h - bottom); ctx.lineTo(c.w - 10, c.h - bottom); ctx.stroke();
    ctx.textAlign = "right"; ctx.fillStyle = "#555";
    for (var e = lmin; e <= lmax; e++) ctx.fillText(Math.pow(10, e) + " ms", left - 4, y(Math.pow(10, e)) + 4);
    rows.forEach(function (r, i) {
      var x0 = left + i * gw + gw * 0.1;
      keys.forEach(function (k, j) {
        if (!(r[k] > 0)) return;
        ctx.fillStyle = colors[j]; ctx.fillRect(x0 + j * bw, y(r[k]), bw - 1, c.h - bottom - y(r[k]));
      });
      ctx.fillStyle = "#222"; ctx.textAlign = "center";
      ctx.fillText(r.name.length > 22 ? r.name.slice(0, 21) + "…" : r.name, x0 + 2 * bw, c.h - bottom + 14);
    });
    ctx.textAlign = "left";
    names.forEach(function (n, j) {
      ctx.fillStyle = colors[j]; ctx.fillRect(left + 10 + j * 70, c.h - 24, 10, 10);
      ctx.fillStyle = "#222"; ctx.fillText(n, left + 24 + j * 70, c.h - 15);
    });
  }

  overheadChart();
  throughputCharts();
  latencyChart();
  document.body.setAttribute("data-charts-drawn", "true");
})();
