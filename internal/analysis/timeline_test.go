package analysis

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/obsbench/obsbench/internal/driver"
	"github.com/obsbench/obsbench/internal/result"
)

// run is a rounds run whose one session completed perSecond[i] statements
// in second i, with 3% noise.
func run(cond string, round int, level func(sec int) float64, seconds int, seed uint64) result.Run {
	r := rand.New(rand.NewPCG(seed, 7))
	per := make([]int64, seconds)
	var sum int64
	for i := range per {
		per[i] = int64(level(i) * (1 + 0.03*r.NormFloat64()))
		sum += per[i]
	}
	return result.Run{Condition: cond, Round: round, Method: "rounds", Driver: driver.Result{
		Clients: 1, Seconds: float64(seconds), Measured: sum, Throughput: float64(sum) / float64(seconds), PerSecond: [][]int64{per},
	}}
}

// Summarize reports a run that was heavy at first and then recovered
// (study 2's live stream), and a stream that stopped receiving; a steady
// observer has neither, and every condition has its 5 s series.
func TestSummarizeFindsTransients(t *testing.T) {
	flat := func(int) float64 { return 1000 }
	recovers := func(s int) float64 {
		if s < 30 {
			return 400
		}
		return 950
	}
	var runs []result.Run
	for round := 1; round <= 3; round++ {
		runs = append(runs,
			run("baseline", round, flat, 90, uint64(round)),
			run("stream", round, recovers, 90, uint64(10+round)),
			run("steady", round, func(int) float64 { return 800 }, 90, uint64(20+round)))
	}
	// The stream's reader received bytes for 40 s, then nothing.
	runs[1].StreamPerSecond = make([]int64, 90)
	for i := range 40 {
		runs[1].StreamPerSecond[i] = 1 << 20
	}
	s := Summarize(result.Summary{}, []string{"stream", "steady"}, runs)
	by := map[string]result.ConditionSummary{}
	for _, c := range s.Conditions {
		by[c.Name] = c
	}
	tr := by["stream"].Transients
	if len(tr) != 4 {
		t.Fatalf("stream transients = %+v; want 3 recoveries and 1 stopped stream", tr)
	}
	for _, x := range tr[:1] {
		if x.Kind != "recovered" || x.AtSeconds < 25 || x.AtSeconds > 35 || x.BeforePct < 50 || x.AfterPct > 10 {
			t.Errorf("transient %+v; want recovered near 30 s, from about 60%% to about 5%% overhead", x)
		}
	}
	var stopped bool
	for _, x := range tr {
		if x.Kind == "stream stopped" {
			stopped = x.AtSeconds == 40 && x.Round == 1 && strings.Contains(x.Note, "second 40")
		}
	}
	if !stopped {
		t.Errorf("transients %+v; want the round 1 stream stopped at second 40", tr)
	}
	if n := len(by["steady"].Transients); n != 0 {
		t.Errorf("steady observer has %d transients; want none", n)
	}
	if got := by["baseline"].Series; len(got) != 18 || got[0] < 900 || got[0] > 1100 {
		t.Errorf("baseline series = %v; want 18 buckets near 1000/s", got)
	}
}
