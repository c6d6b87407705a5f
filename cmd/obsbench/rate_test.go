package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/obsbench/obsbench/internal/result"
)

// checkRate fails unless run r's side has a rate result whose counts
// add up: every arrival due in the window started, skipped or waiting at
// its close. It says whether the side kept the rate; on a machine this
// loaded (the tests run several at a time on two cores) a side may fall
// behind, and the report must then say so rather than show a latency.
func checkRate(t *testing.T, r result.Run, side string, d result.DriverResult) (held bool) {
	t.Helper()
	q := d.Rate
	if q == nil {
		t.Fatalf("run %d (%s), %s: no rate result", r.Seq, r.Condition, side)
	}
	if q.Scheduled == 0 || q.Completed == 0 || q.Scheduled != q.Started+q.Skipped+q.Backlog {
		t.Errorf("run %d (%s), %s: %+v; want arrivals scheduled, completed, and started + skipped + backlog = scheduled", r.Seq, r.Condition, side, *q)
	}
	return !q.Saturated()
}

// thousandsOf is v as the text report prints a count: whole, in groups
// of three digits.
func thousandsOf(v float64) string {
	digits := fmt.Sprintf("%.0f", v)
	for i := len(digits) - 3; i > 0; i -= 3 {
		digits = digits[:i] + "," + digits[i:]
	}
	return digits
}

// summaryOf reads out's summary.json, checked against the schema.
func summaryOf(t *testing.T, out string) result.Summary {
	t.Helper()
	s, err := readSummary(t, filepath.Join(out, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// A duet at a fixed rate, 40% of the capacity the probes find: both
// twins are offered the same arrivals in each phase and keep them, every
// statement is recorded, and the overhead is read from the server CPU per
// statement, with the latency from the schedule beside it.
func TestRateDuet(t *testing.T) {
	needServers(t)
	asWorkers(t)
	tmp, _ := privateState(t)
	out := filepath.Join(tmp, "out")
	stdout, stderr := runOK(t, "run", "--load", "40", "--observers", "log-statements-file", "--rounds", "4",
		"--duration", "2s", "--warmup", "1s", "--seed", "5", "--count=false", "--out", out)
	if !strings.Contains(stderr, "capacity probe: the slower twin under its quota completed") || !strings.Contains(stderr, "--load 40% drives") {
		t.Errorf("stderr does not say what the capacity probe found:\n%s", stderr)
	}
	runs := readRuns(t, out)
	saturated := map[string]bool{}
	schedules := map[int64]bool{}
	for _, r := range runs {
		if r.Error != "" || r.Duet == nil {
			t.Fatalf("run %d (%s): error %q, duet %v", r.Seq, r.Condition, r.Error, r.Duet)
		}
		on, off := checkRate(t, r, "observer's twin", r.Driver), checkRate(t, r, "other twin", r.Duet.Off)
		saturated[r.Condition] = saturated[r.Condition] || !on || !off
		if a, b := r.Driver.Rate.Scheduled, r.Duet.Off.Rate.Scheduled; a != b {
			t.Errorf("run %d: the twins were offered %d and %d arrivals; want the same schedule", r.Seq, a, b)
		}
		schedules[r.Driver.Rate.Scheduled] = true
		if r.Condition == "log-statements-file" && (r.Events == nil || r.Events.Recorded != r.Events.Executed || r.Events.Executed != r.Driver.Executed) {
			t.Errorf("run %d: events %+v, executed %d; want every statement recorded at a rate", r.Seq, r.Events, r.Driver.Executed)
		}
	}
	// Each phase a schedule of its own: one replayed in every phase
	// would offer each the same count, and the rate held over the phases
	// would be that one draw's.
	if len(schedules) == 1 {
		t.Errorf("every one of the %d phases was offered the same %v arrivals; want a schedule of its own each phase", len(runs), schedules)
	}
	s := summaryOf(t, out)
	for _, c := range s.Conditions {
		if c.Duet != nil && c.Rate != nil && c.Rate.Reference != nil && c.Rate.Reference.BusyCPUs >= 0.9*c.Duet.ShareCPUs {
			t.Errorf("%s: the twin without the observer kept %.2f of its %.2f CPUs busy; want about 40%%", c.Name, c.Rate.Reference.BusyCPUs, c.Duet.ShareCPUs)
		}
		rs := c.Rate
		if rs == nil || rs.Reference == nil {
			t.Fatalf("%s: rate %+v; want both sides", c.Name, rs)
		}
		switch {
		case saturated[c.Name]:
			if !printed(stdout, c.Name+": the") || !printed(stdout, "could not keep the rate") {
				t.Errorf("%s fell behind its rate in a run, and the report does not say so:\n%s", c.Name, stdout)
			}
		case rs.Side.Latency == nil || rs.Reference.Latency == nil || rs.P99Added == nil:
			t.Errorf("%s: rate %+v; want both sides' latency and the p99 added", c.Name, rs)
		}
		if c.Overhead == nil || c.Overhead.Basis != result.BasisServerCPU || c.ThroughputOverhead != nil {
			t.Errorf("%s: overhead %+v, throughput overhead %+v; want it read from server CPU per statement alone", c.Name, c.Overhead, c.ThroughputOverhead)
		}
		if c.Name == "log-statements-file" && (c.ServerCost == nil || c.ServerCost.Added.US <= 0) {
			t.Errorf("%s: server cost %+v; want the CPU it adds to a statement", c.Name, c.ServerCost)
		}
	}
	asked := thousandsOf(runs[0].Driver.Rate.Asked)
	for _, want := range []string{"16 clients at " + asked + " units/s", "at a fixed rate of " + asked + " units/s", "overhead % at a fixed rate"} {
		if !printed(stdout, want) {
			t.Errorf("report lacks %q:\n%s", want, stdout)
		}
	}
	if strings.Contains(stdout, "leaves CPU idle") {
		t.Errorf("report warns that the workload leaves CPU idle, as it must below the rate's capacity:\n%s", stdout)
	}
}

// On MariaDB with two workers, each drives its sessions' share of the
// rate and the run keeps it; at a rate far beyond what the server can
// serve the run says it is saturated and shows no latency, and with a
// latency limit skips the arrivals already late.
func TestRateWorkersMariaDB(t *testing.T) {
	needServers(t)
	asWorkers(t)
	tmp, _ := privateState(t)
	out := filepath.Join(tmp, "out")
	common := []string{"run", "--engine", "mariadb", "--workers", "2", "--observers", "baseline-again", "--method", "rounds",
		"--rounds", "2", "--duration", "2s", "--warmup", "500ms", "--clients", "4", "--seed", "3"}
	runOK(t, append(common, "--rate", "500", "--out", out)...)
	for _, r := range readRuns(t, out) {
		if r.Error != "" || len(r.Driver.Workers) != 2 {
			t.Fatalf("run %d (%s): error %q, workers %+v", r.Seq, r.Condition, r.Error, r.Driver.Workers)
		}
		checkRate(t, r, "sessions", r.Driver)
		if q := r.Driver.Rate; q.Asked != 500 {
			t.Errorf("run %d: the workers' shares of the rate add up to %.1f; want 500", r.Seq, q.Asked)
		}
	}
	saturated := filepath.Join(tmp, "saturated")
	stdout, _ := runOK(t, append(common, "--rate", "1000000", "--latency-limit", "5ms", "--out", saturated)...)
	s := summaryOf(t, saturated)
	for _, c := range s.Conditions {
		if c.Rate == nil || c.Rate.Side.SaturatedRuns != c.Rate.Side.Runs || c.Rate.Side.Latency != nil {
			t.Errorf("%s: rate %+v; want every run saturated and no latency", c.Name, c.Rate)
		}
		// Far behind its schedule, a free session skips the arrivals
		// already 5 ms late.
		if c.Rate != nil && c.Rate.Side.Skipped == 0 {
			t.Errorf("%s: %d arrivals skipped at a rate far over capacity with a 5-ms limit; want many", c.Name, c.Rate.Side.Skipped)
		}
	}
	if !printed(stdout, "saturated at this rate") || !printed(stdout, "skipped over the latency limit") {
		t.Errorf("report does not name the saturated runs:\n%s", stdout)
	}
}

// A sweep of loads on MariaDB runs one experiment per load, each at the
// rate its probe found (the higher load's the faster), prints the
// latency-against-load table and writes the sweep's report.html with a
// chart per condition.
func TestLoadSweepMariaDB(t *testing.T) {
	needServers(t)
	tmp, _ := privateState(t)
	out := filepath.Join(tmp, "out")
	stdout, _ := runOK(t, "run", "--engine", "mariadb", "--load", "30,60", "--observers", "baseline-again", "--method", "rounds",
		"--rounds", "2", "--duration", "2s", "--warmup", "500ms", "--clients", "4", "--seed", "7", "--out", out)
	var rates []float64
	for _, dir := range []string{"load-30", "load-60"} {
		s := summaryOf(t, filepath.Join(out, dir))
		if len(s.Conditions) == 0 || s.Conditions[0].Rate == nil {
			t.Fatalf("%s: conditions %+v; want each at a rate", dir, s.Conditions)
		}
		rates = append(rates, s.Conditions[0].Rate.AskedPerS)
	}
	if !(rates[1] > rates[0]) {
		t.Errorf("rates %v at loads 30%% and 60%%; want the higher load the faster", rates)
	}
	for _, want := range []string{"load sweep:", "30%", "60%", thousandsOf(rates[0]), thousandsOf(rates[1])} {
		if !strings.Contains(stdout, want) {
			t.Errorf("sweep table lacks %q:\n%s", want, stdout)
		}
	}
	page, err := os.ReadFile(filepath.Join(out, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`id="chart-load-0"`, `id="chart-load-1"`, "baseline-again", `"loads":[30,60]`} {
		if !strings.Contains(string(page), want) {
			t.Errorf("the sweep's report.html lacks %q", want)
		}
	}
}

// --max-latency-added on a duet at a rate the observer's twin cannot
// keep: plans-file-slow's plans wait on a directory that delays each
// write by a millisecond, so its twin falls behind 1,000 arrivals a
// second while the twin without it, at about a third of its capacity,
// keeps them. The gate then fails the experiment (exit 3) and names the
// observer saturated, whatever the limit: a queue has no latency added.
func TestRateGateSaturated(t *testing.T) {
	needServers(t)
	asWorkers(t)
	tmp, _ := privateState(t)
	out := filepath.Join(tmp, "out")
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"run", "--rate", "1000", "--observers", "plans-file-slow", "--rounds", "2",
		"--duration", "2s", "--warmup", "1s", "--seed", "8", "--count=false", "--max-latency-added", "1000", "--out", out}, &stdout, &stderr)
	if _, err := os.Stat(filepath.Join(out, "summary.json")); err != nil {
		t.Fatalf("exit %d and no summary (%v):\n%s", code, err, stderr.String())
	}
	s := summaryOf(t, out)
	var r *result.RateSummary
	for _, c := range s.Conditions {
		if c.Name == "plans-file-slow" {
			r = c.Rate
		}
	}
	if r == nil || r.Reference == nil {
		t.Fatalf("exit %d; plans-file-slow's rate %+v; want both twins' sides\n%s", code, r, stderr.String())
	}
	if r.Side.SaturatedRuns != r.Side.Runs {
		t.Fatalf("plans-file-slow's twin kept 1,000 arrivals/s in %d of %d runs; want none (its sink delays each write by 1 ms)", r.Side.Runs-r.Side.SaturatedRuns, r.Side.Runs)
	}
	// On a machine this loaded the twin without the observer may fall
	// behind too; the gate must then not blame the observer.
	want, gated := exitOverhead, "p99 latency added above --max-latency-added 1000 ms with 95% confidence: plans-file-slow saturated at this rate (backlog up to"
	if r.Reference.SaturatedRuns > 0 {
		t.Logf("the twin without the observer fell behind in %d of %d runs", r.Reference.SaturatedRuns, r.Reference.Runs)
		want, gated = 0, ""
	}
	if code != want || !strings.Contains(stderr.String(), gated) {
		t.Errorf("exit %d, want %d with %q:\n%s", code, want, gated, stderr.String())
	}
	if !strings.Contains(stdout.String(), "saturated (") {
		t.Errorf("the table does not show the saturated twin's backlog:\n%s", stdout.String())
	}
}

// Alternation at a fixed rate: the observer switched on and off in
// phases of one run on one server, the arrivals one Poisson schedule
// through it. Every run keeps its counts, the observer's cost is read
// from its change in server CPU per statement (throughput is the rate's),
// and the rate section shows the side that was measured.
func TestRateAlternation(t *testing.T) {
	needServers(t)
	tmp := privateTemp(t)
	out := filepath.Join(tmp, "out")
	stdout, _ := runOK(t, "run", "--method", "alternation", "--rate", "300", "--alt-duration", "10s", "--phase-max", "2", "--warmup", "500ms",
		"--clients", "2", "--observers", "log-statements-file", "--seed", "11", "--count=false", "--out", out)
	for _, r := range readRuns(t, out) {
		if r.Error != "" || r.Method != "alternation" || len(r.Phases) < 5 {
			t.Fatalf("run %d (%s): error %q, method %q, %d phases; want alternation's phases", r.Seq, r.Condition, r.Error, r.Method, len(r.Phases))
		}
		checkRate(t, r, "sessions", r.Driver)
		if q := r.Driver.Rate; q.Asked != 300 {
			t.Errorf("run %d: asked %.1f a second; want 300", r.Seq, q.Asked)
		}
	}
	s := summaryOf(t, out)
	var c *result.ConditionSummary
	for i := range s.Conditions {
		if s.Conditions[i].Name == "log-statements-file" {
			c = &s.Conditions[i]
		}
	}
	if c == nil || c.Rate == nil || c.Rate.AskedPerS != 300 || c.Rate.Reference != nil {
		t.Fatalf("log-statements-file: %+v; want a rate section of its one side at 300 a second", c)
	}
	// At a rate throughput is the rate's: the figure is the server CPU
	// per statement's change, or says it was not compared.
	o := c.Overhead
	switch {
	case o == nil:
		t.Errorf("no overhead")
	case c.CPUChange != nil && o.Basis != result.BasisServerCPU:
		t.Errorf("overhead %+v with a CPU change %+v; want it read from server CPU per statement", o, c.CPUChange)
	case c.CPUChange == nil && !strings.Contains(o.Verdict, "not measured: at a fixed rate"):
		t.Errorf("overhead %+v without a CPU change; want it said not measured", o)
	}
	if !strings.Contains(stdout, "300") || !strings.Contains(stdout, "alternation") {
		t.Errorf("report does not name the rate and the method:\n%s", stdout)
	}
	noServersLeft(t, tmp)
}
