package experiment_test

import (
	"context"
	"errors"
	"math"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/obsbench/obsbench/internal/engine/enginetest"
	"github.com/obsbench/obsbench/internal/experiment"
	"github.com/obsbench/obsbench/internal/observer"
	"github.com/obsbench/obsbench/internal/result"
)

// Rounds find an injected overhead: each run against the baseline runs
// next to it, the interval holds the true 20% (statements 25% longer), and
// an observer that costs nothing (A/A in rounds) shows none, on a server
// whose speed drifts 3% from second to second.
func TestRoundsFindKnownOverhead(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := enginetest.New(memOptions(0.03, map[string]float64{"slow": 0.25}))
		cfg := newConfig(t, srv, experiment.MethodRounds, baseline, slow, free)
		// Two comparisons: a paired interval at 97.5% needs 7 pairs.
		cfg.Rounds = 8
		runs := run(t, cfg)
		if len(runs) != 24 {
			t.Fatalf("%d runs; want 3 conditions x 8 rounds", len(runs))
		}
		for _, r := range runs {
			if r.Error != "" || r.Method != "rounds" {
				t.Fatalf("run %d (%s): method %s, error %q", r.Seq, r.Condition, r.Method, r.Error)
			}
		}
		// The baseline runs at the server's speed, within its noise.
		for _, r := range byCondition(runs)[observer.Baseline] {
			if ratio := r.Driver.Throughput / srv.Throughput(); math.Abs(ratio-1) > 0.1 {
				t.Errorf("baseline run %d: %.0f statements/s; want about %.0f", r.Seq, r.Driver.Throughput, srv.Throughput())
			}
		}
		conds := summarize(t, runs)
		checkOverhead(t, conds, "slow", enginetest.ExpectedOverheadPct(0, 0.25), 10)
		checkOverhead(t, conds, "free", 0, 10)
		if m := conds["slow"].Method; !strings.Contains(m, "8 runs, each against the baseline runs next to it") {
			t.Errorf("slow compared by %q; want paired rounds", m)
		}
		// Nothing is left in force, every setting is back.
		if in := srv.InForce(); len(in) > 0 {
			t.Errorf("in force after the experiment: %v", in)
		}
		if st := srv.Stats(); st.Resets != 24 || st.Applies != 24 || st.Reverts != 24 {
			t.Errorf("%+v; want a reset, an apply and a revert per run", st)
		}
	})
}

// A run that fails is recorded with its error and the experiment goes on,
// unless StopOnFailure; what makes later runs untrustworthy (an Apply, a
// Revert or a Verify that fails, a revert that leaves a setting changed)
// stops it.
func TestFaults(t *testing.T) {
	// Rounds of baseline and slow, 3 each: 6 runs of 8 sessions, each of
	// about 1200 statements (960 for slow).
	const total, clients = 6, 8
	for _, tt := range []struct {
		name   string
		faults enginetest.Faults
		stop   bool // StopOnFailure
		// wantErr is in Run's error ("": none); wantRuns runs recorded.
		wantErr  string
		wantRuns int
		// failed are the runs (by Seq) whose Error holds runErr.
		failed []int
		runErr string
		check  func(t *testing.T, srv *enginetest.Server, runs []result.Run, err error)
	}{
		{name: "a dial that fails fails its run only", faults: enginetest.Faults{FailDial: 2*clients + 1},
			wantRuns: total, failed: []int{3}, runErr: "connection refused (dial 17"},
		{name: "a connection dropped mid-run fails its run only", faults: enginetest.Faults{DropExec: 1800},
			wantRuns: total, failed: []int{2}, runErr: enginetest.ErrDropped.Error()},
		{name: "StopOnFailure stops after the failed run", faults: enginetest.Faults{FailDial: 2*clients + 1}, stop: true,
			wantErr: "run 3 (", wantRuns: 3, failed: []int{3}, runErr: "connection refused"},
		{name: "a full log device fails the observer's runs", faults: enginetest.Faults{LogFullUnder: "slow"},
			wantRuns: total, runErr: "log lines were lost: the server failed 1 time(s) to write its log (could not write to log file: No space left on device)",
			check: func(t *testing.T, srv *enginetest.Server, runs []result.Run, err error) {
				for _, r := range runs {
					if (r.Condition == "slow") != (r.Error != "") {
						t.Errorf("run %d (%s): error %q; want one exactly in slow's runs", r.Seq, r.Condition, r.Error)
					}
				}
			}},
		{name: "statement errors are counted, not failures", faults: enginetest.Faults{StatementErrorEvery: 100},
			wantRuns: total, check: func(t *testing.T, srv *enginetest.Server, runs []result.Run, err error) {
				var errs, executed int64
				for _, r := range runs {
					if r.Driver.Errors == 0 || len(r.Driver.ErrorSamples) == 0 {
						t.Errorf("run %d: no statement errors counted", r.Seq)
					}
					errs, executed = errs+r.Driver.Errors, executed+r.Driver.Executed
				}
				if want := srv.Stats().Statements / 100; errs != want {
					t.Errorf("%d statement errors in %d statements; want %d", errs, executed, want)
				}
			}},
		{name: "an Apply that fails stops the experiment", faults: enginetest.Faults{FailApply: "slow"},
			wantErr: "apply slow: memory: applying slow failed", wantRuns: -1,
			check: func(t *testing.T, srv *enginetest.Server, runs []result.Run, err error) {
				if len(runs) >= total || len(byCondition(runs)["slow"]) > 0 {
					t.Errorf("runs %d, of slow %d; want the experiment stopped at slow's first", len(runs), len(byCondition(runs)["slow"]))
				}
			}},
		{name: "a Revert that fails stops the experiment after its run", faults: enginetest.Faults{FailRevert: "slow"},
			wantErr: "revert slow: memory: reverting slow failed", wantRuns: -1,
			check: func(t *testing.T, srv *enginetest.Server, runs []result.Run, err error) {
				if last := runs[len(runs)-1]; last.Condition != "slow" || len(byCondition(runs)["slow"]) != 1 || last.Error != "" {
					t.Errorf("last run %s (error %q); want slow's first, measured and recorded", last.Condition, last.Error)
				}
			}},
		{name: "a Verify that fails stops the experiment", wantErr: "verify failed", wantRuns: 1,
			faults: enginetest.Faults{Hook: func(op enginetest.Op) error {
				if op.Kind == enginetest.OpVerify && op.N == 3 { // Run's own, then one per run
					return errors.New("verify failed")
				}
				return nil
			}}},
		{name: "a revert that leaves a setting changed stops the experiment", faults: enginetest.Faults{LeaveChanged: "slow"},
			wantErr: `revert slow: after reverting slow the server's settings differ from before: slow_log: "off" -> "on"`, wantRuns: -1,
			check: func(t *testing.T, srv *enginetest.Server, runs []result.Run, err error) {
				var sc *experiment.SettingsChangedError
				if !errors.As(err, &sc) {
					t.Fatalf("error %v; want a *SettingsChangedError", err)
				}
				if sc.Observer != "slow" || !reflect.DeepEqual(sc.Diffs, []string{`slow_log: "off" -> "on"`}) {
					t.Errorf("SettingsChangedError %+v", sc)
				}
			}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				opts := memOptions(0, map[string]float64{"slow": 0.25})
				opts.Faults = tt.faults
				srv := enginetest.New(opts)
				cfg := newConfig(t, srv, experiment.MethodRounds, baseline, slow)
				cfg.StopOnFailure = tt.stop
				runs, err := experiment.Run(t.Context(), cfg)
				switch {
				case tt.wantErr == "" && err != nil:
					t.Fatalf("Run: %v", err)
				case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
					t.Fatalf("Run: %v; want an error with %q", err, tt.wantErr)
				}
				if tt.wantRuns >= 0 && len(runs) != tt.wantRuns {
					t.Fatalf("%d runs; want %d", len(runs), tt.wantRuns)
				}
				for _, r := range runs {
					switch {
					case len(tt.failed) > 0 && containsInt(tt.failed, r.Seq):
						if !strings.Contains(r.Error, tt.runErr) {
							t.Errorf("run %d (%s): error %q; want %q", r.Seq, r.Condition, r.Error, tt.runErr)
						}
					case len(tt.failed) > 0 && r.Error != "":
						t.Errorf("run %d (%s) failed too: %s", r.Seq, r.Condition, r.Error)
					case tt.runErr != "" && len(tt.failed) == 0 && r.Error != "" && !strings.Contains(r.Error, tt.runErr):
						t.Errorf("run %d (%s): error %q; want %q", r.Seq, r.Condition, r.Error, tt.runErr)
					case tt.runErr == "" && r.Error != "":
						t.Errorf("run %d (%s) failed: %s", r.Seq, r.Condition, r.Error)
					}
				}
				// Every run recorded is in results.jsonl.
				file, rerr := result.ReadRuns(filepath.Join(cfg.Out, "results.jsonl"))
				if rerr != nil || len(file) != len(runs) {
					t.Errorf("results.jsonl: %d runs (%v); want %d", len(file), rerr, len(runs))
				}
				// A failed run counts as failed, not as a sample.
				for name, c := range summarize(t, runs) {
					failed := 0
					for _, r := range byCondition(runs)[name] {
						if r.Error != "" {
							failed++
						}
					}
					if c.Failed != failed || len(c.Throughput.Runs) != len(byCondition(runs)[name])-failed {
						t.Errorf("%s: summary has %d failed and %d samples; want %d failed", name, c.Failed, len(c.Throughput.Runs), failed)
					}
				}
				if tt.check != nil {
					tt.check(t, srv, runs, err)
				}
				// Whatever stopped the experiment, only a failed revert
				// leaves an observer in force.
				if in := srv.InForce(); len(in) > 0 && tt.faults.FailRevert == "" {
					t.Errorf("in force after the experiment: %v", in)
				}
			})
		})
	}
}

func containsInt(xs []int, x int) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

// Resuming runs only what Done lacks, in the plan's places, and appends
// them to results.jsonl; a Done that does not match the plan is refused.
func TestResume(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := enginetest.New(memOptions(0, map[string]float64{"slow": 0.25}))
		cfg := newConfig(t, srv, experiment.MethodRounds, baseline, slow, free)
		first, err := experiment.Run(t.Context(), cfg)
		if err != nil || len(first) != 9 {
			t.Fatalf("first experiment: %d runs, %v", len(first), err)
		}
		// An interruption after run 4: the command keeps the runs that
		// finished, then resumes.
		const kept = 4
		path := filepath.Join(cfg.Out, "results.jsonl")
		if err := result.Rewrite(path, first[:kept]); err != nil {
			t.Fatal(err)
		}
		done := map[int]result.Run{}
		for _, r := range first[:kept] {
			done[r.Seq] = r
		}
		srv2 := enginetest.New(memOptions(0, map[string]float64{"slow": 0.25}))
		cfg2 := newConfig(t, srv2, experiment.MethodRounds, baseline, slow, free)
		cfg2.Out, cfg2.Done = cfg.Out, done
		var started []int
		cfg2.Progress = func(p experiment.Progress) {
			if !p.Done {
				started = append(started, p.Seq)
			}
		}
		runs := run(t, cfg2)
		if want := []int{5, 6, 7, 8, 9}; !reflect.DeepEqual(started, want) {
			t.Errorf("resumed runs %v; want %v", started, want)
		}
		if st := srv2.Stats(); st.Applies != 9-kept || st.Dials != (9-kept)*8 {
			t.Errorf("resumed server: %+v; want %d runs' applies and dials", st, 9-kept)
		}
		if len(runs) != 9 {
			t.Fatalf("%d runs; want 9", len(runs))
		}
		for i, r := range runs {
			if r.Seq != i+1 || r.Condition != first[i].Condition || r.Round != first[i].Round {
				t.Errorf("run %d: seq %d %s round %d; the plan has %s round %d", i+1, r.Seq, r.Condition, r.Round, first[i].Condition, first[i].Round)
			}
			if i < kept && !r.Started.Equal(first[i].Started) {
				t.Errorf("run %d was run again", r.Seq)
			}
			if i >= kept && (r.Error != "" || r.Driver.Measured == 0) {
				t.Errorf("run %d: %q, %d statements", r.Seq, r.Error, r.Driver.Measured)
			}
		}
		file, err := result.ReadRuns(path)
		if err != nil {
			t.Fatal(err)
		}
		for i, r := range file {
			if r.Seq != i+1 {
				t.Errorf("results.jsonl line %d is run %d", i+1, r.Seq)
			}
		}
		if len(file) != 9 {
			t.Errorf("results.jsonl holds %d runs; want 9", len(file))
		}

		// Another plan (another seed) at the same places: refused
		// before anything runs.
		srv3 := enginetest.New(memOptions(0, nil))
		cfg3 := newConfig(t, srv3, experiment.MethodRounds, baseline, slow, free)
		wrong := first[0]
		wrong.Condition = "something else"
		cfg3.Out, cfg3.Done = cfg.Out, map[int]result.Run{1: wrong}
		if _, err := experiment.Run(t.Context(), cfg3); err == nil || !strings.Contains(err.Error(), "plan changed") {
			t.Errorf("resume with a run the plan does not have there: %v", err)
		}
		if st := srv3.Stats(); st.Applies != 0 {
			t.Errorf("a refused resume applied %d observers", st.Applies)
		}
	})
}

// An observer's events are counted against the statements executed
// (warm-up and the last in flight included): all of them, only those of
// the workload's tag, and with losses the engine's own lost count too.
func TestEventsRecordedVersusExecuted(t *testing.T) {
	for _, tt := range []struct {
		name     string
		lose     float64
		lost     string // the observer's lost-event query
		tag      string // the workload's tag; "" keeps credit-top1's
		wantLost bool
	}{
		{name: "every statement recorded"},
		{name: "a tenth lost", lose: 0.1},
		{name: "a tenth lost, and the engine says so", lose: 0.1, lost: "SELECT lost", wantLost: true},
		{name: "statements without the tag are not the workload's", tag: "not-in-any-statement"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				opts := memOptions(0, map[string]float64{"log": 0.1})
				opts.LoseEvents = tt.lose
				srv := enginetest.New(opts)
				cfg := newConfig(t, srv, experiment.MethodRounds)
				if tt.tag != "" {
					cfg.Workload.Tag = tt.tag
				}
				log := observer.Observer{Name: "log", Settings: map[string]string{"log_statement": "all"},
					Events: &observer.EventCounter{Source: observer.SourceSQL, Query: "SELECT count", Lost: tt.lost}}
				r, err := experiment.RunOnce(t.Context(), cfg, log)
				if err != nil || r.Error != "" {
					t.Fatalf("RunOnce: %v, %q", err, r.Error)
				}
				ev := r.Events
				if ev == nil {
					t.Fatal("no events")
				}
				executed := r.Driver.Executed
				want := executed - int64(math.Floor(float64(executed)*tt.lose))
				if tt.tag != "" {
					want = 0
				}
				if ev.Executed != executed || ev.Recorded != want || executed < 1000 {
					t.Errorf("recorded %d for %d executed (driver: %d); want %d", ev.Recorded, ev.Executed, executed, want)
				}
				switch {
				case tt.wantLost && (ev.EngineLost == nil || *ev.EngineLost != executed-want):
					t.Errorf("engine's lost count %v; want %d", ev.EngineLost, executed-want)
				case !tt.wantLost && ev.EngineLost != nil:
					t.Errorf("engine's lost count %d; the observer has none", *ev.EngineLost)
				}
				// The summary warns of every difference.
				s := summarizeWarnings(r)
				if got := strings.Contains(s, "recorded"); got != (want != executed) {
					t.Errorf("warnings %q; want one about the events: %v", s, want != executed)
				}
			})
		})
	}
}

// A counter that sees only prepared statements' executions is not run
// against a workload that sends its statements as text: the events say
// why, and report no loss.
func TestPreparedOnlyCounterAndTextStatements(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := enginetest.New(memOptions(0, map[string]float64{"log": 0.1}))
		cfg := newConfig(t, srv, experiment.MethodRounds)
		cfg.Workload.TextStatements = true
		o := observer.Observer{Name: "log", Settings: map[string]string{"log_statement": "all"},
			Events: &observer.EventCounter{Source: observer.SourceSQL, Query: "SELECT count", PreparedOnly: true}}
		r, err := experiment.RunOnce(t.Context(), cfg, o)
		if err != nil || r.Error != "" {
			t.Fatalf("RunOnce: %v, %q", err, r.Error)
		}
		if ev := r.Events; ev == nil || ev.Recorded != 0 || !strings.Contains(ev.Error, "--query-mode simple") || ev.EngineLost != nil {
			t.Errorf("events %+v; want not counted, saying why", ev)
		}
		cfg.Workload.TextStatements = false
		if r, err = experiment.RunOnce(t.Context(), cfg, o); err != nil || r.Events == nil || r.Events.Error != "" || r.Events.Recorded != r.Driver.Executed {
			t.Errorf("prepared statements: events %+v, %v; want counted", r.Events, err)
		}
	})
}

func summarizeWarnings(r result.Run) string {
	r.Seq, r.Round, r.Method = 1, 1, "rounds"
	var s []string
	for _, w := range summaryOf([]result.Run{r}).Warnings {
		if strings.Contains(w, "events") {
			s = append(s, w)
		}
	}
	return strings.Join(s, "; ")
}

// restartingApply is a memory server whose Apply of the observers named in
// it restarts the server (as a preloaded library does on PostgreSQL).
type restartingApply struct {
	*enginetest.Server
	restarts map[string]bool
}

func (r restartingApply) ApplyRestarts(_ context.Context, o observer.Observer) (bool, error) {
	return r.restarts[o.Name], nil
}

// The runner restarts a server before each run, but not before an Apply
// that restarts it anyway: every run starts from one restart.
func TestNoResetBeforeRestartingApply(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := enginetest.New(memOptions(0, map[string]float64{"slow": 0.25}))
		cfg := newConfig(t, srv, experiment.MethodRounds, baseline, slow, free)
		cfg.Target = restartingApply{srv, map[string]bool{"slow": true}}
		cfg.Rounds = 3
		runs, err := experiment.Run(t.Context(), cfg)
		if err != nil || len(runs) != 9 {
			t.Fatalf("%d runs, %v; want 9", len(runs), err)
		}
		if st := srv.Stats(); st.Resets != 6 || st.Applies != 9 || st.Reverts != 9 {
			t.Errorf("%+v; want a reset before each of the 6 runs of baseline and free, none before slow's", st)
		}
	})
}
