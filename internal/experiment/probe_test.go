package experiment

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/obsbench/obsbench/internal/engine"
	"github.com/obsbench/obsbench/internal/result"
)

// differ is a Prober whose wait profile diff is its own.
type differ struct {
	engine.Prober
	err error
}

func (d differ) DiffWaitProfile(before, after map[string]int64) (map[string]int64, error) {
	if d.err != nil {
		return nil, d.err
	}
	return map[string]int64{"own": 1}, nil
}

// A window's engine waits are the engine's own diff when it has one, and
// its error (statistics cleared mid-window) travels with the run in place
// of waits; without one, each wait's growth above zero.
func TestEngineWaitGrowth(t *testing.T) {
	before, after := map[string]int64{"a": 5, "b": 9}, map[string]int64{"a": 7, "b": 2, "c": 4}
	if got, err := engine.EngineWaitGrowth(nil, before, after); err != nil || len(got) != 2 || got["a"] != 2 || got["c"] != 4 {
		t.Errorf("EngineWaitGrowth without a differ = %v, %v; want a: 2, c: 4", got, err)
	}
	cleared := errors.New("statistics were cleared during the window")
	for _, tt := range []struct {
		prober     engine.Prober
		wantWaits  map[string]int64
		wantErrors []string
	}{
		{differ{}, map[string]int64{"own": 1}, nil},
		{differ{err: cleared}, nil, []string{"engine wait profile: statistics were cleared during the window"}},
	} {
		p := &probeWindow{cfg: Probes{Counters: true}, prober: tt.prober, seconds: 1, countersRead: true, profile0: before, profile1: after}
		var r result.Run
		p.record(&r, false)
		if len(r.EngineWaits) != len(tt.wantWaits) || r.EngineWaits["own"] != tt.wantWaits["own"] || !slices.Equal(r.ProbeErrors, tt.wantErrors) {
			t.Errorf("record = waits %v, errors %q; want %v, %q", r.EngineWaits, r.ProbeErrors, tt.wantWaits, tt.wantErrors)
		}
		if tt.wantErrors != nil && !strings.Contains(strings.Join(r.ProbeErrors, ""), "cleared") {
			t.Errorf("the run does not say the statistics were cleared: %q", r.ProbeErrors)
		}
	}
}
