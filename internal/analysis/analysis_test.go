package analysis_test

import (
	"math"
	"strings"
	"testing"

	"github.com/obsbench/obsbench/internal/analysis"
	"github.com/obsbench/obsbench/internal/collect"
	"github.com/obsbench/obsbench/internal/driver"
	"github.com/obsbench/obsbench/internal/result"
)

func run(cond string, tput float64, events *result.Events) result.Run {
	return result.Run{
		Condition: cond,
		Driver:    driver.Result{Throughput: tput, Measured: int64(tput * 10), Seconds: 10, Latency: driver.Latency{P50: 1000 / tput, P99: 5000 / tput}},
		Usage: collect.Usage{
			Server: &collect.CPU{Seconds: 12, Pct: 60},
			Driver: collect.CPU{Seconds: 4, Pct: 20},
		},
		Events: events,
	}
}

func TestSummarize(t *testing.T) {
	var runs []result.Run
	for i, b := range []float64{1000, 1020, 980, 1010, 990} {
		runs = append(runs, run("baseline", b, nil))
		runs = append(runs, run("slow", 0.8*b+float64(i), &result.Events{Recorded: 100, Executed: 100}))
		runs = append(runs, run("same", b+3, nil))
	}
	failed := run("slow", 1, nil)
	failed.Error = "connection reset"
	runs = append(runs, failed)

	s := analysis.Summarize(result.Summary{Engine: "postgres"}, []string{"baseline", "slow", "same"}, runs)
	if len(s.Conditions) != 3 || s.Conditions[0].Name != "baseline" {
		t.Fatalf("conditions = %+v", s.Conditions)
	}
	base, slow, same := s.Conditions[0], s.Conditions[1], s.Conditions[2]
	if base.Overhead != nil {
		t.Errorf("baseline overhead = %+v; want nil", base.Overhead)
	}
	if base.Throughput.Median != 1000 || len(base.Throughput.Runs) != 5 {
		t.Errorf("baseline throughput = %+v; want median 1000 over 5 runs", base.Throughput)
	}
	if o := slow.Overhead; o == nil || !o.Significant || o.Verdict != "slower" || math.Abs(o.Pct-20) > 1 || o.CILow > 20 || o.CIHigh < 19 {
		t.Errorf("slow overhead = %+v; want significant, about 20%%", slow.Overhead)
	}
	if slow.Failed != 1 || len(slow.Throughput.Runs) != 5 {
		t.Errorf("slow: %d failed, %d runs; want 1 failed, 5 runs", slow.Failed, len(slow.Throughput.Runs))
	}
	if slow.Events == nil || slow.Events.Recorded != 500 || slow.Events.Executed != 500 {
		t.Errorf("slow events = %+v; want 500/500", slow.Events)
	}
	if o := same.Overhead; o == nil || o.Significant || o.Verdict != "no detectable difference" || o.CILow > 0 || o.CIHigh < 0 {
		t.Errorf("same overhead = %+v; want no detectable difference, interval around 0", same.Overhead)
	}
	if same.Events != nil {
		t.Errorf("same events = %+v; want nil (records none)", same.Events)
	}
	if c := base.CPU; c.ServerPct == nil || *c.ServerPct != 60 || c.DriverPct != 20 || *c.ServerUSPerStmt != 1e6*12/10000 {
		t.Errorf("baseline cpu = %+v", c)
	}
	if !strings.Contains(s.Method, "Bonferroni correction over 2 comparisons") {
		t.Errorf("Method = %q; want the correction named", s.Method)
	}
	// Pairs of baseline runs differ by at most 4% (980 vs 1020).
	if nf := s.NoiseFloorPct; nf == nil || *nf <= 0 || *nf > 100*(1-980.0/1020) {
		t.Errorf("NoiseFloorPct = %v; want in (0, %v]", nf, 100*(1-980.0/1020))
	}
	if len(s.Warnings) != 0 {
		t.Errorf("Warnings = %q; want none", s.Warnings)
	}
}

func TestSummarizeWarns(t *testing.T) {
	hot := run("baseline", 1000, nil)
	hot.Usage.Driver.Pct = 40 // median with the other baseline run (20%): 30%
	lost := run("logger", 900, &result.Events{Recorded: 90, Executed: 100})
	s := analysis.Summarize(result.Summary{}, []string{"baseline", "logger"}, []result.Run{hot, run("baseline", 1000, nil), lost, lost})
	want := []string{"driver used 30% of the machine", "recorded 180 events for 200 statements executed (-20)", "use --rounds 4 or more"}
	all := strings.Join(s.Warnings, "\n")
	for _, w := range want {
		if !strings.Contains(all, w) {
			t.Errorf("Warnings = %q; want one containing %q", s.Warnings, w)
		}
	}
	if v := s.Conditions[1].Overhead.Verdict; v != "too few samples to tell" {
		t.Errorf("verdict with 2 runs = %q; want too few samples to tell", v)
	}
}

// altRun is an alternation run of 20 s in phases of 4 s (off, on, off, on,
// off), with tput statements per second in off phases and on*tput in on
// phases, server CPU of 0.5 s per second, and the driver's on and off
// latency as given.
func altRun(cond, held string, tput, on float64, latOn, latOff float64) result.Run {
	r := result.Run{Condition: cond, Method: "alternation", Held: held}
	per := make([]int64, 20)
	for sec := range per {
		per[sec] = int64(tput)
		if (sec/4)%2 == 1 {
			per[sec] = int64(on * tput)
		}
		r.Usage.PerSecond = append(r.Usage.PerSecond, collect.Second{Server: 0.5, Driver: 0.2})
	}
	for i := 0; i < 5; i++ {
		r.Phases = append(r.Phases, result.Phase{Start: 4 * i, End: 4*i + 4, On: i%2 == 1})
	}
	r.Driver = driver.Result{Seconds: 20, PerSecond: [][]int64{per}, Latency: driver.Latency{P50: 9, P99: 9},
		LatencyBy: map[string]driver.Latency{"on": {P50: latOn, P99: 2 * latOn}, "off": {P50: latOff, P99: 2 * latOff}}}
	for _, n := range per {
		r.Driver.Measured += n
	}
	r.Driver.Throughput = float64(r.Driver.Measured) / 20
	// 10 CPU-seconds over 20 s at 25% of the machine: 0.5 s/s is 25%.
	r.Usage.Server = &collect.CPU{Seconds: 10, Pct: 25}
	r.Usage.Driver = collect.CPU{Seconds: 4, Pct: 10}
	return r
}

// An observer measured whole (rounds) and its switchable part
// (alternation) gives two rows side by side, each saying what it
// measures and over what, with its reference; the alternating row's
// latency and CPU are over its on phases.
func TestWholeAndSwitchablePart(t *testing.T) {
	var runs []result.Run
	for _, b := range []float64{1000, 1020, 980, 1010, 990, 1005} {
		runs = append(runs, run("baseline", b, nil), run("ext", 0.7*b, nil))
	}
	for i := 0; i < 3; i++ {
		runs = append(runs, altRun("ext (switchable)", "preload ext", 1000, 0.9, 2, 1))
	}
	s := analysis.Summarize(result.Summary{Rounds: 6, Seconds: 10}, []string{"baseline", "ext"}, runs)
	if len(s.Conditions) != 3 || s.Conditions[1].Name != "ext" || s.Conditions[2].Name != "ext (switchable)" {
		t.Fatalf("conditions %v; want baseline, ext, ext (switchable)", names(s))
	}
	whole, part := s.Conditions[1], s.Conditions[2]
	if whole.Measures != result.MeasuresWhole || whole.Window != result.WindowRuns {
		t.Errorf("whole: measures %q over %q", whole.Measures, whole.Window)
	}
	if r := whole.Reference; r == nil || r.StmtsPerS < 990 || r.StmtsPerS > 1015 {
		t.Errorf("whole's reference %+v; want the neighbouring baseline runs' about 1,000 stmts/s", r)
	}
	if part.Measures != result.MeasuresSwitchable || part.Window != result.WindowOnPhases {
		t.Errorf("switchable: measures %q over %q", part.Measures, part.Window)
	}
	if part.Throughput.Median != 900 || part.Reference == nil || part.Reference.StmtsPerS != 1000 {
		t.Errorf("switchable: %v stmts/s against %+v; want 900 on, 1000 off", part.Throughput.Median, part.Reference)
	}
	if part.LatencyMS.P50 != 2 || part.Reference.LatencyMS.P50 != 1 {
		t.Errorf("switchable latency %+v, reference %+v; want the on phases' 2 ms and the off phases' 1 ms", part.LatencyMS, part.Reference.LatencyMS)
	}
	// 0.5 CPU-s/s at 25% per 10 CPU-s over 20 s: 25% of the machine; the
	// server's µs per statement on: 0.5 s / 900.
	if c := part.CPU; c.ServerPct == nil || math.Abs(*c.ServerPct-25) > 1e-9 || math.Abs(*c.ServerUSPerStmt-1e6*0.5/900) > 1e-6 {
		t.Errorf("switchable CPU %+v; want 25%% and %.1f µs/stmt over the on phases", c, 1e6*0.5/900)
	}
	if o := part.Overhead; o == nil || math.Abs(o.Pct-10) > 0.5 {
		t.Errorf("switchable overhead %+v; want 10%%", part.Overhead)
	}
	if !strings.Contains(s.Method, "over 2 comparisons") {
		t.Errorf("method %q; want both measurements in the correction", s.Method)
	}
}

// A summary records what ran: an experiment whose conditions all
// alternated has no rounds, whatever --rounds said.
func TestSummaryRecordsWhatRan(t *testing.T) {
	runs := []result.Run{altRun("baseline A/A", "no change", 1000, 1, 1, 1), altRun("log", "", 1000, 0.9, 2, 1)}
	s := analysis.Summarize(result.Summary{Rounds: 5, Seconds: 8}, []string{"baseline", "log"}, runs)
	if s.Rounds != 0 || s.Seconds != 0 || s.AltSeconds != 20 || s.NoiseFloorPct != nil {
		t.Errorf("rounds %d of %gs, alternation %gs, noise floor %v; want no rounds, 20 s alternation runs, no noise floor", s.Rounds, s.Seconds, s.AltSeconds, s.NoiseFloorPct)
	}
	if m := s.Conditions[1].Measures; m != result.MeasuresWhole {
		t.Errorf("log measures %q; want whole (nothing held)", m)
	}
}

func names(s result.Summary) []string {
	var out []string
	for _, c := range s.Conditions {
		out = append(out, c.Name)
	}
	return out
}

// Lock events are many per statement: their count is the observer's
// volume, summed over the runs with what the engine dropped and how long
// statements waited for it, and never warned about as missing events.
func TestVolumeEventsSumWithoutLossWarning(t *testing.T) {
	n := func(v int64) *int64 { return &v }
	locks := func(rec, blocked int64) result.Run {
		return run("locks", 900, &result.Events{Recorded: rec, Executed: 100, Volume: true, EngineLost: n(0), EngineLostBuffers: n(2), EngineBlocked: n(blocked)})
	}
	s := analysis.Summarize(result.Summary{}, []string{"baseline", "locks"},
		[]result.Run{run("baseline", 1000, nil), run("baseline", 1000, nil), locks(2500, 40), locks(2700, 60)})
	ev := s.Conditions[1].Events
	if ev == nil || ev.Recorded != 5200 || !ev.Volume || *ev.EngineLostBuffers != 4 || *ev.EngineBlocked != 100 || *ev.EngineLost != 0 {
		t.Fatalf("Events = %+v; want 5,200 recorded as volume, 4 buffers lost, 100 ms blocked", ev)
	}
	all := strings.Join(s.Warnings, "\n")
	if strings.Contains(all, "events for") {
		t.Errorf("a volume count is compared with statements: %q", s.Warnings)
	}
	for _, w := range []string{"dropped 4 whole buffer(s)", "blocked for 100 (the session"} {
		if !strings.Contains(all, w) {
			t.Errorf("Warnings = %q; want one containing %q", s.Warnings, w)
		}
	}
}
