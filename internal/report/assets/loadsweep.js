// obsbench load sweep: draws latency against load per condition from the
// data block, with uPlot. No network at view time.
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("obsbench-data").textContent);
  var lines = [
    { key: "p50_with", label: "p50 with", stroke: "#1f77b4", dash: [] },
    { key: "p50_without", label: "p50 without", stroke: "#1f77b4", dash: [6, 4] },
    { key: "p99_with", label: "p99 with", stroke: "#d62728", dash: [] },
    { key: "p99_without", label: "p99 without", stroke: "#d62728", dash: [6, 4] }
  ];
  data.curves.forEach(function (c, i) {
    var el = document.getElementById("chart-load-" + i);
    if (!el || c.loads.length === 0) return;
    var series = [{ label: "load %" }], values = [c.loads];
    lines.forEach(function (l) {
      series.push({ label: l.label, stroke: l.stroke, dash: l.dash, width: 2, spanGaps: false, points: { show: true, size: 6 } });
      values.push(c[l.key]);
    });
    new uPlot({
      width: el.clientWidth || 800, height: 260, series: series,
      scales: { x: { time: false }, y: { distr: 3 } },
      axes: [{ label: "load (% of the baseline's server CPU busy)" }, { label: "latency ms", size: 70 }]
    }, values, el);
  });
  document.body.setAttribute("data-charts-drawn", "true");
})();
