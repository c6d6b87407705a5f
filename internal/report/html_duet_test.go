package report_test

import (
	"bytes"
	"html/template"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/obsbench/obsbench/internal/analysis"
	"github.com/obsbench/obsbench/internal/report"
	"github.com/obsbench/obsbench/internal/result"
)

// duetRecorded is a default duet experiment as obsbench records it: twin
// servers held to half a CPU each, 16 rounds of 2-s phases of the A/A
// arm and three observers, each phase's twin in the A,B,B,A order, the
// observer's cost in its twin's CPU per statement, on a machine whose
// twins differ a little. It is made, not recorded (no duet run is in
// testdata), and summarized by the analysis as a recorded one is.
func duetRecorded(t *testing.T) (result.Summary, []result.Run) {
	t.Helper()
	rng := rand.New(rand.NewPCG(7, 11))
	observers := []struct {
		name string
		cost float64 // added server CPU per statement, as a share
		logs bool
	}{{result.AAName, 0, false}, {"auto-explain-analyze", 0.45, false}, {"log-statements-file", 0.24, true}, {"pg-stat-statements", 0.03, false}}
	start := time.Date(2026, 1, 5, 10, 0, 0, 0, time.UTC)
	var runs []result.Run
	for round := 1; round <= 16; round++ {
		for i, o := range observers {
			on := "a"
			if (round+i)%4 == 1 || (round+i)%4 == 2 {
				on = "b"
			}
			// Twin b's server is 2% slower than twin a's.
			twinCost := map[string]float64{"a": 1, "b": 1.02}
			off := map[string]string{"a": "b", "b": "a"}[on]
			onUS := 190 * twinCost[on] * (1 + o.cost) * (1 + 0.02*rng.NormFloat64())
			offUS := 190 * twinCost[off] * (1 + 0.02*rng.NormFloat64())
			side := func(us float64) (result.DriverResult, result.Usage) {
				per := 0.5 / (us / 1e6) // statements a second at the share
				// Two sessions (PerSecond[session][second]).
				d := result.DriverResult{Clients: 16, Seconds: 2, PerSecond: [][]int64{make([]int64, 2), make([]int64, 2)}}
				cpu := make([]result.CPUSecond, 2)
				for s := range 2 {
					n := int64(per * (1 + 0.01*rng.NormFloat64()))
					d.PerSecond[0][s], d.PerSecond[1][s] = n/2, n-n/2
					d.Measured += n
					cpu[s] = result.CPUSecond{Server: 0.48 + 0.01*rng.NormFloat64(), Driver: 0.1}
				}
				d.Executed, d.Throughput = d.Measured, float64(d.Measured)/2
				d.Latency = result.Latency{P50: 0.4 * us / 190, P90: 0.9 * us / 190, P99: 2.1 * us / 190, P999: 6 * us / 190}
				return d, result.Usage{Server: &result.CPU{Seconds: 0.96, Pct: 24}, Driver: result.CPU{Seconds: 0.2, Pct: 5}, PerSecond: cpu}
			}
			d, u := side(onUS)
			od, ou := side(offUS)
			r := result.Run{Version: result.Version, Seq: len(runs) + 1, Round: round, Condition: o.name, Method: result.MethodDuet,
				Measures: result.MeasuresWhole, Started: start, Driver: d, Usage: u,
				Duet: &result.Duet{On: on, Off: od, OffUsage: ou, ShareCPUs: 0.5, OnCPUs: 0.48, OffCPUs: 0.48,
					OnServerUS: onUS, OffServerUS: offUS}}
			if o.logs {
				r.Events = &result.Events{Recorded: d.Executed, Executed: d.Executed}
			}
			runs = append(runs, r)
			start = start.Add(3400 * time.Millisecond)
		}
	}
	head := result.Summary{Version: result.Version, Engine: "postgres", Server: "16.4", Workload: "credit-top1", Clients: 16, Seed: 7,
		Rounds: 16, Seconds: 2, Warmup: 0.5,
		Environment: &result.Environment{Command: []string{"obsbench", "run"}, Obsbench: "test",
			Machine: result.Machine{Cores: 2, MemoryBytes: 8 << 30, Kernel: "6.1"}}}
	var names []string
	for _, o := range observers {
		names = append(names, o.name)
	}
	return analysis.Summarize(head, names, runs), runs
}

// A duet's page draws the experiment's timeline and each observer's
// phases, not a line of two points per phase; says the method once, not
// in each row; has the events in the conditions table; and shows no
// section with nothing in it.
func TestHTMLReportDuet(t *testing.T) {
	s, runs := duetRecorded(t)
	var b bytes.Buffer
	if err := report.HTML(&b, s, runs); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	checkHas(t, "page", page, `id="chart-timeline"`, `"timeline":{"sides":"twin"`, `"phases":[{"pct":`,
		"<th>events recorded / executed</th>", "Every row: duet: 16 phases", "row is the cost of the whole observer, switched on")
	for _, absent := range []string{`id="chart-throughput-`, `id="waits"`, `id="workers"`, `id="counters"`, "<th>method</th>"} {
		if strings.Contains(page, absent) {
			t.Errorf("a duet's page has %q", absent)
		}
	}
	if m := template.HTMLEscapeString(s.Conditions[1].Method); strings.Count(page, m) != 1 {
		t.Errorf("the method is said %d times; want once: %q", strings.Count(page, m), m)
	}
}
