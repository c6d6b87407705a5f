package experiment_test

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/obsbench/obsbench/internal/engine/enginetest"
	"github.com/obsbench/obsbench/internal/experiment"
	"github.com/obsbench/obsbench/internal/observer"
	"github.com/obsbench/obsbench/internal/result"
)

// Alternation finds an injected overhead phase by phase: the interval
// holds the true 20% and the A/A arm, which switches nothing, shows none,
// on a server whose speed drifts 3% from second to second. The on phases'
// latency is kept apart from the off phases'.
func TestAlternationFindsKnownOverhead(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := enginetest.New(memOptions(0.03, map[string]float64{"slow": 0.25}))
		cfg := newConfig(t, srv, experiment.MethodAlternation, baseline, slow)
		runs := run(t, cfg)
		by := byCondition(runs)
		if len(runs) != 4 || len(by[experiment.AAName]) != 2 || len(by["slow"]) != 2 {
			t.Fatalf("runs %v; want 2 of the A/A arm and 2 of slow", names(runs))
		}
		for _, r := range runs {
			if r.Error != "" || r.Method != "alternation" || r.Driver.Seconds != 40 {
				t.Fatalf("run %d (%s): %s, %v s, error %q", r.Seq, r.Condition, r.Method, r.Driver.Seconds, r.Error)
			}
			if len(r.Phases) < 10 || r.Phases[0].On || r.Phases[len(r.Phases)-1].On {
				t.Errorf("run %d: phases %+v; want many, off first and last", r.Seq, r.Phases)
			}
			for _, p := range r.Phases {
				if p.SwitchMS > 100 {
					t.Errorf("run %d: a switch took %.0f ms", r.Seq, p.SwitchMS)
				}
			}
		}
		conds := summarize(t, runs)
		checkOverhead(t, conds, "slow", enginetest.ExpectedOverheadPct(0, 0.25), 10)
		checkOverhead(t, conds, experiment.AAName, 0, 10)
		if c := conds["slow"]; c.Measures != result.MeasuresWhole {
			t.Errorf("slow measures %q; want the whole observer (nothing of it is held)", c.Measures)
		}
		// A statement waits for the 3 others queued per slot: about
		// 4 ms off, 25% more on.
		for _, r := range by["slow"] {
			on, off := r.Driver.LatencyBy["on"].P50, r.Driver.LatencyBy["off"].P50
			if ratio := on / off; ratio < 1.15 || ratio > 1.35 {
				t.Errorf("run %d: p50 latency %.2f ms on, %.2f ms off; want 25%% more on", r.Seq, on, off)
			}
		}
		if s := summaryOf(runs); s.MDEPct == nil || *s.MDEPct <= 0 || *s.MDEPct > 10 {
			t.Errorf("MDE %v; want the A/A arm's resolution, a few percent", s.MDEPct)
		}
		if st := srv.Stats(); st.Applies != st.Reverts || len(srv.InForce()) > 0 {
			t.Errorf("%+v, in force %v: every switch on must be switched off", st, srv.InForce())
		}
	})
}

func names(runs []result.Run) []string {
	var out []string
	for _, r := range runs {
		out = append(out, r.Condition)
	}
	return out
}

// Method auto measures an observer with a part that needs a restart
// whole (rounds, restart and all) and its switchable part beside it
// (alternation, the held part in force in both phases), an observer a
// reload switches entirely by alternation, one no reload switches in
// rounds: each finds its own known cost.
func TestMethodAutoMeasuresWholeAndSwitchable(t *testing.T) {
	opts := func(settings map[string]string) enginetest.Options {
		o := memOptions(0.02, map[string]float64{
			"log": 0.25, "log" + enginetest.HeldSuffix: 0.10, // held: logging_collector
			"track":                           0.10,
			"buffers" + enginetest.HeldSuffix: 0.20,
		})
		o.RestartOnly = []string{"logging_collector", "shared_buffers"}
		o.Settings = map[string]string{"logging_collector": "off", "shared_buffers": "128MB"}
		for k, v := range settings {
			o.Settings[k] = v
		}
		return o
	}
	obs := []observer.Observer{baseline,
		{Name: "log", Settings: map[string]string{"logging_collector": "on", "log_statement": "all"}},
		{Name: "track", Settings: map[string]string{"track": "all"}},
		{Name: "buffers", Settings: map[string]string{"shared_buffers": "1GB"}},
	}
	type arm struct {
		Name, Method, Measures string
	}
	armsOf := func(t *testing.T, cfg experiment.Config) []arm {
		t.Helper()
		arms, err := experiment.Arms(t.Context(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		var got []arm
		for _, a := range arms {
			got = append(got, arm{a.Name, string(a.Method), a.Measures})
		}
		return got
	}

	t.Run("held part already in force", func(t *testing.T) {
		srv := enginetest.New(opts(map[string]string{"logging_collector": "on"}))
		got := armsOf(t, newConfig(t, srv, experiment.MethodAuto, obs...))
		want := []arm{{"baseline", "rounds", ""}, {"baseline A/A", "alternation", ""},
			{"log", "alternation", "whole"}, {"track", "alternation", "whole"}, {"buffers", "rounds", "whole"}}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("arms %v; want %v", got, want)
		}
	})

	synctest.Test(t, func(t *testing.T) {
		srv := enginetest.New(opts(nil))
		cfg := newConfig(t, srv, experiment.MethodAuto, obs...)
		// Four comparisons: a paired interval at 98.75% needs 8 pairs.
		cfg.Rounds = 8
		got := armsOf(t, cfg)
		want := []arm{{"baseline", "rounds", ""}, {"baseline A/A", "alternation", ""},
			{"log", "rounds", "whole"}, {"log (switchable)", "alternation", "switchable part"},
			{"track", "alternation", "whole"}, {"buffers", "rounds", "whole"}}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("arms %v; want %v", got, want)
		}
		// The progress estimate weighs each step by what it runs: after
		// short rounds it already expects the long alternation runs.
		var ends []time.Duration // elapsed + remaining, after each step
		var total time.Duration
		cfg.Progress = func(p experiment.Progress) {
			if p.Done {
				ends, total = append(ends, p.Elapsed+p.Remaining), p.Elapsed
			}
		}
		runs := run(t, cfg)
		for i, end := range ends {
			if end < total*2/3 || end > total*3/2 {
				t.Errorf("after step %d of %d the estimated end was %v; the experiment took %v", i+1, len(ends), end, total)
			}
		}
		for _, r := range runs {
			if r.Error != "" {
				t.Fatalf("run %d (%s): %s", r.Seq, r.Condition, r.Error)
			}
		}
		for _, r := range byCondition(runs)["log (switchable)"] {
			if r.Held != "logging_collector=on" || r.Measures != result.MeasuresSwitchable {
				t.Errorf("run %d of log (switchable): held %q, measures %q", r.Seq, r.Held, r.Measures)
			}
		}
		conds := summarize(t, runs)
		checkOverhead(t, conds, "log", enginetest.ExpectedOverheadPct(0, 0.35), 12)
		checkOverhead(t, conds, "log (switchable)", enginetest.ExpectedOverheadPct(0.10, 0.25), 12)
		checkOverhead(t, conds, "track", enginetest.ExpectedOverheadPct(0, 0.10), 12)
		checkOverhead(t, conds, "buffers", enginetest.ExpectedOverheadPct(0, 0.20), 12)
		checkOverhead(t, conds, experiment.AAName, 0, 12)
	})
}

// An alternation run ends with a check run, the observer in force
// throughout, that counts its events against the statements executed.
func TestAlternationChecksEvents(t *testing.T) {
	for _, lose := range []float64{0, 0.25} {
		t.Run(fmt.Sprintf("lose %v", lose), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				opts := memOptions(0, map[string]float64{"log": 0.25})
				opts.LoseEvents = lose
				srv := enginetest.New(opts)
				log := observer.Observer{Name: "log", Settings: map[string]string{"log_statement": "all"},
					Events: &observer.EventCounter{Source: observer.SourceServerLog, Match: "{{tag}}"}}
				cfg := newConfig(t, srv, experiment.MethodAlternation, baseline, log)
				cfg.Alternation = experiment.Alternation{Duration: 8 * time.Second, MinPhase: 2, MaxPhase: 2, Reps: 1, CheckDuration: time.Second}
				runs := run(t, cfg)
				for _, r := range runs {
					if r.Condition == experiment.AAName {
						if r.Events != nil {
							t.Errorf("the A/A arm counted events: %+v", r.Events)
						}
						continue
					}
					ev := r.Events
					if ev == nil {
						t.Fatalf("run %d (%s): no events", r.Seq, r.Condition)
					}
					// The check run: 1 s at 2000/1.25 statements/s, and the
					// 8 in flight when it ended.
					if ev.Executed < 1600 || ev.Executed > 1608 {
						t.Errorf("check run executed %d statements; want 1600 (+8 in flight)", ev.Executed)
					}
					if want := ev.Executed - int64(float64(ev.Executed)*lose); ev.Recorded != want {
						t.Errorf("recorded %d of %d; want %d", ev.Recorded, ev.Executed, want)
					}
				}
				warned := strings.Contains(strings.Join(summaryOf(runs).Warnings, "\n"), "recorded")
				if warned != (lose > 0) {
					t.Errorf("warnings %q; want one about lost events: %v", summaryOf(runs).Warnings, lose > 0)
				}
			})
		})
	}
}

// With a target resolution the A/A arm runs first, alone, and its phase
// noise sizes the observers' alternation runs.
func TestResolutionPlanFromPilot(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := enginetest.New(memOptions(0.03, map[string]float64{"slow": 0.25}))
		cfg := newConfig(t, srv, experiment.MethodAlternation, baseline, slow)
		cfg.Alternation.Duration, cfg.Alternation.Reps = 20*time.Second, 1
		cfg.TargetResolution, cfg.MaxTime = 2, time.Hour
		var notes []string
		cfg.Log = func(format string, args ...any) { notes = append(notes, fmt.Sprintf(format, args...)) }
		runs := run(t, cfg)
		if len(runs) != 2 || runs[0].Condition != experiment.AAName || runs[0].Driver.Seconds != 20 {
			t.Fatalf("runs %v; want the 20 s A/A pilot first", names(runs))
		}
		if len(notes) != 1 || !strings.Contains(notes[0], "resolution plan: one phase pair varies by") {
			t.Fatalf("notes %q; want the plan", notes)
		}
		// 3% per second is several percent per phase pair: 2% needs
		// more than the pilot's 20 s.
		if s := runs[1].Driver.Seconds; s <= 20 {
			t.Errorf("slow ran %v s after the plan %q; want longer than the pilot", s, notes[0])
		}
		if !strings.Contains(notes[0], fmt.Sprintf("%v per alternation run", time.Duration(runs[1].Driver.Seconds)*time.Second)) {
			t.Errorf("slow ran %v s; the plan said %q", runs[1].Driver.Seconds, notes[0])
		}
	})
}
