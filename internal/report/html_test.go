package report_test

import (
	"bytes"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/obsbench/obsbench/internal/report"
	"github.com/obsbench/obsbench/internal/result"
)

// The HTML report of a recorded experiment holds every condition, a chart
// element for the overheads and the latencies, a per-second chart of each
// condition whose runs are long enough for a series (the alternation
// runs, not the 3-s rounds), its data, the chart library inlined, and
// nothing fetched from anywhere.
func TestHTMLReport(t *testing.T) {
	dir := filepath.Join("testdata", "run-mariadb")
	s, runs := recorded(t)
	var b bytes.Buffer
	if err := report.HTML(&b, s, runs); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	compareGolden(t, filepath.Join(dir, "report.html"), b.Bytes())
	for _, c := range s.Conditions {
		if !strings.Contains(page, "<td>"+c.Name+"</td>") {
			t.Errorf("no table row for condition %s", c.Name)
		}
	}
	series := 0
	for _, c := range s.Conditions {
		long := false
		for _, r := range runs {
			long = long || (r.Condition == c.Name && len(r.Driver.PerSecond) > 0 && len(r.Driver.PerSecond[0]) >= 10)
		}
		if got := strings.Contains(page, "<h3>"+c.Name+`</h3><div class="chart" id="chart-throughput-`+strconv.Itoa(series)+`"`); got != long {
			t.Errorf("condition %s: a per-second chart %v; want %v (runs of 10 s or more)", c.Name, got, long)
		}
		if long {
			series++
		}
	}
	for _, want := range []string{`id="chart-overhead"`, `id="chart-latency"`, `id="obsbench-data"`, "uPlot", "Content-Security-Policy",
		"obsbench run --engine mariadb", "settings not at their defaults", "innodb_buffer_pool_size", `id="waits"`} {
		if !strings.Contains(page, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	// Self-contained: no URL the browser would fetch.
	if m := regexp.MustCompile(`(?i)(src|href)\s*=\s*["']?(https?:)?//`).FindString(page); m != "" {
		t.Errorf("report fetches something: %q", m)
	}
	// Every long run's series is in the data block.
	for _, r := range runs {
		if len(r.Driver.PerSecond) > 0 && len(r.Driver.PerSecond[0]) >= 10 && !strings.Contains(page, `"label":"run `+strconv.Itoa(r.Seq)+` `) {
			t.Errorf("run %d missing from the chart data", r.Seq)
		}
	}
}

// A counted run's report has the counted column, each observer's change
// in its row, and what counting does not see.
func TestHTMLReportCounted(t *testing.T) {
	s := readSummary(t, filepath.Join("testdata", "duet-counted.json"))
	var b bytes.Buffer
	if err := report.HTML(&b, s, nil); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, want := range []string{"<th>instr/stmt &Delta;% [CI]</th>", `28.92 <span class="ci">[28.56, 29.28]</span></td>`, "Not counted: the kernel"} {
		if !strings.Contains(page, want) {
			t.Errorf("report lacks %q", want)
		}
	}
}

// A duet's report has the server cost's columns, each with its interval;
// a row without one reads "-".
func TestHTMLReportServerCost(t *testing.T) {
	s := readSummary(t, filepath.Join("testdata", "duet-counted.json"))
	s.Conditions[1].ServerCost = &result.ServerCost{BaseUS: 60, Added: result.AddedSummary{US: 2.5, CILow: 1.25, CIHigh: 3.75},
		Share: result.ChangeSummary{Pct: 4, CILow: 2, CIHigh: 5.9}}
	var b bytes.Buffer
	if err := report.HTML(&b, s, nil); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, want := range []string{"<th>srv +&micro;s/stmt [CI]</th><th>srv share % [CI]</th>", `+2.50 <span class="ci">[+1.25, +3.75]</span></td><td class="num">4.0 <span class="ci">[2.0, 5.9]</span></td>`,
		`<td class="num">-</td><td class="num">-</td>`} {
		if !strings.Contains(page, want) {
			t.Errorf("report lacks %q", want)
		}
	}
}
