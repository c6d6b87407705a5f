package analysis_test

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/obsbench/obsbench/internal/analysis"
)

// level is a stretch of a synthetic per-second series.
type level struct {
	seconds int
	rate    float64
}

// series returns per-second throughputs at the given levels, each second
// multiplied by 1 + noise*N(0, 1) drawn from a generator seeded with seed.
func series(seed uint64, noise float64, levels ...level) []float64 {
	rng := rand.New(rand.NewPCG(seed, 0x0b5))
	var out []float64
	for _, l := range levels {
		for range l.seconds {
			out = append(out, l.rate*(1+noise*rng.NormFloat64()))
		}
	}
	return out
}

// repeat returns n copies of v.
func repeat(v float64, n int) []float64 {
	return slices.Repeat([]float64{v}, n)
}

func TestTotalPerSecond(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   [][]int64
		want []float64
	}{
		{"none", nil, []float64{}},
		{"one session", [][]int64{{1, 2, 3}}, []float64{1, 2, 3}},
		{"sessions add up", [][]int64{{1, 2, 3}, {10, 20, 30}}, []float64{11, 22, 33}},
		{"ragged", [][]int64{{1, 2}, {10, 20, 30}}, []float64{11, 22, 30}},
	} {
		if got := analysis.TotalPerSecond(tc.in); !slices.Equal(got, tc.want) {
			t.Errorf("%s: TotalPerSecond(%v) = %v; want %v", tc.name, tc.in, got, tc.want)
		}
	}
}

func TestBucket(t *testing.T) {
	ten := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	for _, tc := range []struct {
		name  string
		in    []float64
		width int
		want  []float64
	}{
		{"empty", nil, 5, []float64{}},
		{"whole buckets", ten, 5, []float64{3, 8}},
		{"partial 2 of 5 dropped", append(slices.Clone(ten), 11, 12), 5, []float64{3, 8}},
		{"partial 3 of 5 kept", append(slices.Clone(ten), 11, 12, 13), 5, []float64{3, 8, 12}},
		{"partial half kept", ten[:6], 4, []float64{2.5, 5.5}},
		{"only a short bucket", []float64{1, 2}, 5, []float64{}},
		{"width 1 copies", ten[:3], 1, []float64{1, 2, 3}},
		{"width 0 as 1", ten[:3], 0, []float64{1, 2, 3}},
	} {
		if got := analysis.Bucket(tc.in, tc.width); !slices.Equal(got, tc.want) {
			t.Errorf("%s: Bucket(%v, %d) = %v; want %v", tc.name, tc.in, tc.width, got, tc.want)
		}
	}
}

func TestFindShift(t *testing.T) {
	step := slices.Concat(repeat(1, 4), repeat(2, 4))
	for _, tc := range []struct {
		name       string
		series     []float64
		minSegment int
		alpha      float64
		minChange  float64
		wantOK     bool
		wantAt     int
		wantChange float64
		wantP      float64 // checked when > 0
	}{
		// 4 vs 4 completely separated: the exact two-sided p is 2/C(8,4).
		{"clean step", step, 2, 0.05, 0.15, true, 4, 1, 2.0 / 70},
		{"clean step, alpha below the smallest p", step, 2, 0.01, 0.15, false, 4, 1, 2.0 / 70},
		{"clean step, change too small", step, 2, 0.05, 1.5, false, 4, 1, 2.0 / 70},
		{"step too early for minSegment, tied", slices.Concat(repeat(1, 1), repeat(2, 7)), 3, 0.5, 0.15, false, 3, 0.2, 0},
		{"falling step", slices.Concat(repeat(10, 12), repeat(6, 12)), 3, 0.01, 0.15, true, 12, -0.4, 0},
		{"flat", repeat(5, 12), 3, 0.01, 0.15, false, 3, 0, 1},
		{"too short", slices.Concat(repeat(1, 3), repeat(9, 2)), 3, 0.5, 0.15, false, 0, 0, 0},
		{"empty", nil, 3, 0.5, 0.15, false, 0, 0, 0},
	} {
		s, ok := analysis.FindShift(tc.series, tc.minSegment, tc.alpha, tc.minChange)
		if ok != tc.wantOK || s.At != tc.wantAt || math.Abs(s.Change-tc.wantChange) > 1e-9 {
			t.Errorf("%s: FindShift = %+v, %v; want At %d, Change %v, ok %v", tc.name, s, ok, tc.wantAt, tc.wantChange, tc.wantOK)
		}
		if tc.wantP > 0 && math.Abs(s.P-tc.wantP) > 1e-9 {
			t.Errorf("%s: P = %v; want %v", tc.name, s.P, tc.wantP)
		}
	}
}

func TestDetectTransient(t *testing.T) {
	const ref = 1000.0
	for _, tc := range []struct {
		name   string
		noise  float64
		levels []level
		ref    float64
		want   bool
		kind   string
		at     int    // want |At - at| <= 5 (one bucket)
		phrase string // in String()
	}{
		{"recovered", 0.05, []level{{30, 0.40 * ref}, {90, 0.95 * ref}}, ref,
			true, analysis.TransientRecovered, 30, "heavy for the first"},
		{"recovered, later and partly", 0.05, []level{{60, 0.40 * ref}, {60, 0.70 * ref}}, ref,
			true, analysis.TransientRecovered, 60, "the observer's cost fell mid-run"},
		{"degraded", 0.05, []level{{60, 0.97 * ref}, {60, 0.55 * ref}}, ref,
			true, analysis.TransientDegraded, 60, "the observer started costing mid-run"},
		{"rise without reference", 0.05, []level{{30, 0.40 * ref}, {90, 0.95 * ref}}, 0,
			true, analysis.TransientShift, 30, "throughput changed"},
		{"rise past the reference", 0.05, []level{{60, ref}, {60, 1.4 * ref}}, ref,
			true, analysis.TransientShift, 60, "vs baseline before"},
		{"change too small", 0.01, []level{{60, 0.95 * ref}, {60, ref}}, ref,
			false, "", 0, ""},
		{"too short", 0.05, []level{{15, 0.40 * ref}, {10, 0.95 * ref}}, ref,
			false, "", 0, ""},
		{"flat", 0.10, []level{{120, 0.8 * ref}}, ref,
			false, "", 0, ""},
	} {
		for seed := range uint64(10) {
			tr, ok := analysis.DetectTransient(series(seed, tc.noise, tc.levels...), 5, tc.ref)
			if ok != tc.want {
				t.Errorf("%s, seed %d: DetectTransient = %+v, %v; want ok %v", tc.name, seed, tr, ok, tc.want)
				continue
			}
			if !ok {
				continue
			}
			if tr.Kind != tc.kind || tr.At < tc.at-5 || tr.At > tc.at+5 || !strings.Contains(tr.String(), tc.phrase) {
				t.Errorf("%s, seed %d: DetectTransient = %+v (%q); want %s at %d s, reading %q", tc.name, seed, tr, tr, tc.kind, tc.at, tc.phrase)
			}
			if hasRef := tc.ref > 0; hasRef == math.IsNaN(tr.BeforeOverhead) || hasRef == math.IsNaN(tr.AfterOverhead) {
				t.Errorf("%s, seed %d: overheads %v, %v; want NaN exactly when there is no reference", tc.name, seed, tr.BeforeOverhead, tr.AfterOverhead)
			}
		}
	}
}

// TestDetectTransientFalsePositives checks that seconds as noisy as 10%
// around a steady level never make a transient, over many runs and
// lengths (both the exact and the normal rank-sum test).
func TestDetectTransientFalsePositives(t *testing.T) {
	for _, seconds := range []int{60, 120, 600} {
		found := 0
		for seed := range uint64(200) {
			if tr, ok := analysis.DetectTransient(series(seed, 0.10, level{seconds, 1000}), 5, 1000); ok {
				found++
				t.Logf("%d s, seed %d: %v", seconds, seed, tr)
			}
		}
		if found > 0 {
			t.Errorf("%d s flat runs: %d of 200 show a transient; want 0", seconds, found)
		}
	}
}

func TestTransientString(t *testing.T) {
	nan := math.NaN()
	for _, tc := range []struct {
		tr   analysis.Transient
		want string
	}{
		{analysis.Transient{}, "no change of level"},
		{analysis.Transient{Kind: analysis.TransientRecovered, At: 35, BeforeOverhead: 0.62, AfterOverhead: 0.03},
			"heavy for the first 35 s (-62% vs baseline), then -3%: the observer stopped costing mid-run"},
		{analysis.Transient{Kind: analysis.TransientRecovered, At: 60, BeforeOverhead: 0.6, AfterOverhead: 0.3},
			"heavy for the first 60 s (-60% vs baseline), then -30%: the observer's cost fell mid-run"},
		{analysis.Transient{Kind: analysis.TransientDegraded, At: 40, BeforeOverhead: -0.002, AfterOverhead: 0.45},
			"+0% vs baseline for the first 40 s, then -45%: the observer started costing mid-run"},
		{analysis.Transient{Kind: analysis.TransientDegraded, At: 40, BeforeOverhead: 0.2, AfterOverhead: 0.45},
			"-20% vs baseline for the first 40 s, then -45%: the observer's cost grew mid-run"},
		{analysis.Transient{Kind: analysis.TransientShift, At: 30, BeforeOverhead: nan, AfterOverhead: nan,
			Shift: analysis.Shift{At: 6, Before: 400, After: 950, Change: 1.375}},
			"throughput changed +138% at 30 s (400/s before, 950/s after)"},
		{analysis.Transient{Kind: analysis.TransientShift, At: 60, BeforeOverhead: 0, AfterOverhead: -0.4,
			Shift: analysis.Shift{At: 12, Before: 1000, After: 1400, Change: 0.4}},
			"throughput changed +40% at 60 s (+0% vs baseline before, +40% after)"},
	} {
		if got := tc.tr.String(); got != tc.want {
			t.Errorf("String() = %q; want %q", got, tc.want)
		}
	}
}

func TestStreamStopped(t *testing.T) {
	busy := series(1, 0.05, level{60, 500})
	for _, tc := range []struct {
		name       string
		events     []float64
		statements []float64
		minQuiet   int
		wantAt     int
		wantOK     bool
	}{
		{"stops at 20", series(2, 0.1, level{20, 800}, level{40, 0}), busy, 5, 20, true},
		{"trickles below 1% from 20", slices.Concat(series(2, 0.1, level{20, 800}), repeat(3, 40)), busy, 5, 20, true},
		{"never stops", series(2, 0.1, level{60, 800}), busy, 5, 0, false},
		{"statements stop too", series(2, 0.1, level{20, 800}, level{40, 0}),
			slices.Concat(busy[:20], repeat(0, 40)), 5, 0, false},
		{"statements stall for a second", series(2, 0.1, level{20, 800}, level{40, 0}),
			slices.Concat(busy[:30], repeat(0, 1), busy[31:]), 5, 0, false},
		{"quiet gap that resumes", series(2, 0.1, level{20, 800}, level{20, 0}, level{20, 800}), busy, 5, 0, false},
		{"quiet for fewer than minQuiet seconds", series(2, 0.1, level{57, 800}, level{3, 0}), busy, 5, 0, false},
		{"quiet for exactly minQuiet seconds", series(2, 0.1, level{55, 800}, level{5, 0}), busy, 5, 55, true},
		{"never received anything", repeat(0, 60), busy, 5, 0, false},
		{"statements one partial second longer", series(2, 0.1, level{20, 800}, level{40, 0}),
			append(slices.Clone(busy), 200), 5, 20, true},
		{"stream shorter than statements", series(2, 0.1, level{20, 800}, level{20, 0}), busy, 5, 20, true},
		{"empty", nil, nil, 5, 0, false},
	} {
		at, ok := analysis.StreamStopped(tc.events, tc.statements, tc.minQuiet)
		if at != tc.wantAt || ok != tc.wantOK {
			t.Errorf("%s: StreamStopped = %d, %v; want %d, %v", tc.name, at, ok, tc.wantAt, tc.wantOK)
		}
	}
}
