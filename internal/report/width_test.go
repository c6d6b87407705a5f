package report

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/obsbench/obsbench/internal/result"
	"github.com/obsbench/obsbench/internal/spec"
	"github.com/obsbench/obsbench/internal/study"
)

// Every line of the default text reports fits a terminal of textWidth
// columns: the tables and the notes alike. Beyond the 20 characters of
// the catalog's longest observer name, a longer name widens a table by
// its own length only.
func TestTextWidth(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.json"))
	var sums []result.Summary
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var s result.Summary
		if err := json.Unmarshal(b, &s); err != nil {
			t.Fatal(err)
		}
		sums = append(sums, s)
		var out bytes.Buffer
		if err := Text(&out, s); err != nil {
			t.Fatal(err)
		}
		checkWidth(t, f, out.String(), s.Conditions)
	}

	// At a rate, a side that could not keep it and units late.
	rate := rateSummary()
	var out bytes.Buffer
	if err := Text(&out, rate); err != nil {
		t.Fatal(err)
	}
	checkWidth(t, "a rate with a saturated side", out.String(), rate.Conditions)

	sweeps := map[string]SweepRecord{
		"dose sweep": doseRecord(5),
		"load sweep": {Workload: "credit-top1", Loads: []float64{25, 90}, Points: loadSweepPoints()},
		"session sweep": {Workload: "credit-top1", Sessions: []int{4, 16}, PerUnit: 1, Points: []SweepPoint{
			{Sessions: 4, Dir: "sessions-4", Summary: sums[0]}, {Sessions: 16, Dir: "sessions-16", Summary: sums[1]}}},
		"thousand-query sweep": {Workload: "dss-mix", Sessions: []int{4}, PerUnit: 1000, Points: []SweepPoint{
			{Sessions: 4, Dir: "sessions-4", Summary: sums[0]}}},
	}
	for what, rec := range sweeps {
		var out bytes.Buffer
		if err := PrintSweep(&out, spec.FormatText, "obsbench-results/20260101-000000", rec); err != nil {
			t.Fatal(err)
		}
		var conds []result.ConditionSummary
		for _, p := range rec.Points {
			conds = append(conds, p.Summary.Conditions...)
		}
		checkWidth(t, what, out.String(), conds)
	}
}

// rateSummary is a duet at a rate of three conditions: the A/A arm, an
// observer whose twin kept the rate with units late over the limit, and
// one whose twin could not keep it.
func rateSummary() result.Summary {
	held := result.RateSide{Runs: 16, AchievedPerS: 1300, Latency: &result.RateLatency{P50: 0.26, P99: 1.2, P999: 3.69}, LagP99MS: 0.26, BusyCPUs: 0.21, CapacityPerS: 3030}
	late := held
	late.Late, late.Skipped = 120, 3
	sat := result.RateSide{Runs: 16, AchievedPerS: 900, SaturatedRuns: 16, BacklogMax: 123456, BusyCPUs: 0.5, CapacityPerS: 900}
	added := &result.LatencyAdded{MS: 12.345, CILow: -1.234, CIHigh: 25.678, Verdict: "no detectable difference"}
	cost := &result.ServerCost{BaseUS: 170, Added: result.AddedSummary{US: 87.6, CILow: 82, CIHigh: 93, Verdict: "more"}, Share: result.ChangeSummary{Pct: 33.2, CILow: 31.7, CIHigh: 34.5}}
	cond := func(name string, side result.RateSide, pct, lo, hi float64, verdict string) result.ConditionSummary {
		return result.ConditionSummary{Name: name, Measures: result.MeasuresWhole, Window: result.WindowRuns,
			Method:   "duet: 16 phases, the observer's twin against its twin server in the same seconds",
			Overhead: &result.OverheadSummary{Basis: result.BasisServerCPU, Pct: pct, CILow: lo, CIHigh: hi, Verdict: verdict, Significant: verdict == "slower"},
			Events:   &result.Events{Recorded: 52098, Executed: 52101}, ServerCost: cost,
			Rate: &result.RateSummary{AskedPerS: 1303, Side: side, Reference: &held, P50Added: added, P99Added: added, P999Added: added}}
	}
	aa := cond(result.AAName, held, 1.7, -0.9, 3.7, "no detectable difference")
	aa.Measures, aa.Events = "", nil
	return result.Summary{Engine: "postgres", Server: "15.18", Workload: "credit-top1", Clients: 16, Rounds: 16, Seconds: 2, Warmup: 0.5, Seed: 1,
		Method: "at a fixed arrival rate, overhead = 1 - C(baseline)/C",
		Conditions: []result.ConditionSummary{aa,
			cond("auto-explain-analyze", late, 33.4, 32.3, 34.4, "slower"),
			cond("plans-file-slow", sat, 60.1, 55.2, 64.9, "slower")},
		Warnings: []string{"plans-file-slow: the observer's side could not keep the rate of 1303 a second in 16 of 16 runs (backlog up to 123456 arrivals): saturated at this rate, its latency not shown; a lower --rate measures it"}}
}

// checkWidth fails t for each line of out, what is named, wider than
// textWidth, or than a table's row of a name longer than 20 needs.
func checkWidth(t *testing.T, what, out string, conds []result.ConditionSummary) {
	t.Helper()
	limit := textWidth
	for _, c := range conds {
		limit = max(limit, textWidth+utf8.RuneCountInString(c.Name)-20)
	}
	for i, line := range strings.Split(out, "\n") {
		if n := utf8.RuneCountInString(line); n > limit {
			t.Errorf("%s: line %d is %d columns; want at most %d:\n%s", what, i+1, n, limit, line)
		}
	}
}

// A study's own table fits the terminal too.
func TestStudyWidth(t *testing.T) {
	for engine, name := range map[string]string{"postgres": "study-wait-signatures", "mariadb": "study-wait-signatures-mariadb"} {
		b, err := os.ReadFile(filepath.Join("testdata", name+".json"))
		if err != nil {
			t.Fatal(err)
		}
		var s result.Summary
		if err := json.Unmarshal(b, &s); err != nil {
			t.Fatal(err)
		}
		st, err := study.Lookup(engine, "wait-signatures")
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		if err := Study(&out, st, s); err != nil {
			t.Fatal(err)
		}
		checkWidth(t, name+" study table", out.String(), s.Conditions)
	}
}
