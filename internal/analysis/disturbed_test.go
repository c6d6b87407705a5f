package analysis

import (
	"strings"
	"testing"

	"github.com/obsbench/obsbench/internal/result"
)

// A run is disturbed by what other processes took in it against the
// experiment's median run, not against a fixed line: two runs at 9.5%
// among runs at 1% are flagged (a fixed 10% missed them), a steady 12%
// in every run flags none (that is the machine, and the summary says it
// was busy), and a duet's warning says where its estimate lies without
// the flagged phases.
func TestDisturbances(t *testing.T) {
	withNoise := func(pcts ...float64) []result.Run {
		var runs []result.Run
		for i, p := range pcts {
			r := duetRun(i+1, map[bool]string{true: "a", false: "b"}[i%4 == 0 || i%4 == 3], 80, 60)
			r.Seq, r.Noise = i+1, result.Noise{OtherPct: p - 0.2, StealPct: 0.2}
			runs = append(runs, r)
		}
		return runs
	}
	for _, tt := range []struct {
		name    string
		pcts    []float64
		flagged []int
	}{
		{"two runs of a neighbour", []float64{1, 1.2, 0.8, 1.1, 9.5, 1, 0.9, 9.5}, []int{5, 8}},
		{"a steady neighbour", []float64{12, 12.5, 11.8, 12.2, 12.1, 11.9}, nil},
		{"jitter under the margin", []float64{1, 2.5, 0.5, 1.5, 2.8, 1}, nil},
	} {
		runs := withNoise(tt.pcts...)
		d := disturbances(runs)
		if d.count(runs) != len(tt.flagged) {
			t.Errorf("%s: %d flagged (%v, limit %.1f); want %v", tt.name, d.count(runs), d.flagged, d.limit, tt.flagged)
		}
		for _, seq := range tt.flagged {
			if _, ok := d.flagged[seq]; !ok {
				t.Errorf("%s: run %d not flagged", tt.name, seq)
			}
		}
		w := d.warning("x", runs, 0.05)
		if (w != "") != (len(tt.flagged) > 0) || (w != "" && !strings.Contains(w, "without them 25.0")) {
			t.Errorf("%s: warning %q", tt.name, w)
		}
	}
	s := Summarize(result.Summary{}, []string{"x"}, withNoise(12, 12.5, 11.8, 12.2, 12.1, 11.9))
	if !strings.Contains(strings.Join(s.Warnings, "\n"), "the machine was busy throughout") {
		t.Errorf("warnings %q; want the busy machine said", s.Warnings)
	}
}

// A duet phase is flagged when one twin's server got clearly less CPU
// than the other's, against the condition's usual gap: a twin that waits
// on its observer's sink in every phase is the observer, not a
// disturbance.
func TestLopsided(t *testing.T) {
	phases := func(on, off func(k int) float64) []result.Run {
		var runs []result.Run
		for k := 1; k <= 16; k++ {
			r := duetRun(k, map[bool]string{true: "a", false: "b"}[k%4 == 1 || k%4 == 0], 80, 60)
			r.Seq = k
			r.Duet.OnCPUs, r.Duet.OffCPUs = on(k), off(k)
			runs = append(runs, r)
		}
		return runs
	}
	jitter := func(k int) float64 { return 0.5 - 0.002*float64(k%3) }
	for _, tt := range []struct {
		name    string
		on, off func(int) float64
		flagged map[int]string // run: the twin short of CPU
	}{
		{"one twin robbed twice", jitter, func(k int) float64 {
			if k == 6 || k == 9 {
				return 0.44
			}
			return jitter(k)
		}, map[int]string{6: "a", 9: "b"}},
		{"an observer that waits in every phase", func(k int) float64 { return 0.44 + jitter(k) - 0.5 }, jitter, nil},
		{"jitter under the margin", jitter, func(k int) float64 { return 0.5 - 0.01*float64(k%2) }, nil},
	} {
		runs := phases(tt.on, tt.off)
		got := lopsided(runs)
		if len(got) != len(tt.flagged) {
			t.Errorf("%s: flagged %v; want %v", tt.name, got, tt.flagged)
			continue
		}
		for seq, short := range tt.flagged {
			if l, ok := got[seq]; !ok || l.Short != short || l.Gap < 10 {
				t.Errorf("%s: run %d: %+v; want twin %s short by about 12%% of its share", tt.name, seq, l, short)
			}
		}
		w := lopsidedWarning("x", runs, 0.05)
		if (w != "") != (len(tt.flagged) > 0) || (w != "" && !strings.Contains(w, "without them 25.0")) {
			t.Errorf("%s: warning %q", tt.name, w)
		}
	}
}
