package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/obsbench/obsbench/internal/result"
	"github.com/obsbench/obsbench/internal/spec"
)

// doseRecord is a dose sweep of three values whose observer costs more
// with each: within 5% with confidence at the first two, not the third.
func doseRecord(limit float64) SweepRecord {
	point := func(v string, pct, lo, hi float64) SweepPoint {
		return SweepPoint{DoseSetting: "auto_explain.sample_rate", DoseValue: v, Dir: "dose-" + v, Summary: result.Summary{Conditions: []result.ConditionSummary{
			{Name: "baseline"},
			{Name: "baseline A/A", Overhead: &result.OverheadSummary{Pct: 0.1, CILow: -1, CIHigh: 1.2, Verdict: "no detectable difference"}},
			{Name: "auto-explain-sampled", Overhead: &result.OverheadSummary{Pct: pct, CILow: lo, CIHigh: hi, Verdict: "slower"},
				Events: &result.Events{Recorded: 100, Executed: 1000, SampleRate: 0.1}},
		}}}
	}
	return SweepRecord{Workload: "credit-top1", Dose: &spec.Dose{Setting: "auto_explain.sample_rate", Values: []string{"0.01", "0.1", "1"}},
		Observer: "auto-explain-sampled", MaxOverhead: &limit,
		Points: []SweepPoint{point("0.01", 0.5, -0.5, 1.5), point("0.1", 3, 2, 4), point("1", 30, 28, 32)}}
}

// A dose sweep prints the overhead against each value, and with
// --max-overhead the largest value up to which every interval stays
// under it.
func TestDoseSweep(t *testing.T) {
	var b bytes.Buffer
	if err := PrintSweep(&b, spec.FormatText, "out", doseRecord(5)); err != nil {
		t.Fatal(err)
	}
	got := b.String()
	for _, want := range []string{"dose sweep: auto-explain-sampled's auto_explain.sample_rate = 0.01, 0.1, 1", "0.01", "3.0 [2.0, 4.0]", "30.0 [28.0, 32.0]",
		"100/1,000 sampled 0.1", "largest auto_explain.sample_rate within --max-overhead 5% with 95% confidence", ": 0.1\n", "one directory per value"} {
		if !strings.Contains(got, want) {
			t.Errorf("dose sweep lacks %q:\n%s", want, got)
		}
	}
	for limit, want := range map[float64]string{1: "", 3.9: "0.01", 4.5: "0.1", 40: "1"} {
		v, ok := DoseLimit(doseRecord(limit).Points, limit)
		if ok != (want != "") || v != want {
			t.Errorf("DoseLimit(%g) = %q, %v; want %q", limit, v, ok, want)
		}
	}
	b.Reset()
	PrintSweep(&b, spec.FormatText, "out", doseRecord(1))
	if !strings.Contains(b.String(), "no value of auto_explain.sample_rate stays within --max-overhead 1%") {
		t.Errorf("a limit no value keeps is not said:\n%s", b.String())
	}
}

// A dose sweep's page draws the curve without a script: a mark per value
// and arm, the limit as a line, the largest value within it said.
func TestDoseSweepHTML(t *testing.T) {
	var b bytes.Buffer
	if err := DoseSweepHTML(&b, doseRecord(5)); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	if n := strings.Count(page, "<circle"); n != 6 {
		t.Errorf("%d marks; want 6 (three values, the observer and the A/A arm each)", n)
	}
	for _, want := range []string{"<svg", `stroke-dasharray="6 4"`, "largest auto_explain.sample_rate within --max-overhead 5%", ">0.01<", "3.0 [2.0, 4.0]"} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if strings.Contains(page, "<script") {
		t.Errorf("the page has a script; want none")
	}
}
