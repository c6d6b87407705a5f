package enginetest_test

import (
	"context"
	"errors"
	"maps"
	"math"
	"reflect"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/obsbench/obsbench/internal/dataset"
	"github.com/obsbench/obsbench/internal/driver"
	"github.com/obsbench/obsbench/internal/engine"
	"github.com/obsbench/obsbench/internal/engine/enginetest"
	"github.com/obsbench/obsbench/internal/observer"
	"github.com/obsbench/obsbench/internal/workload"
)

// A memory server is what the runner and the commands need of a server.
var _ engine.Server = (*enginetest.Server)(nil)

func creditTop1(t *testing.T) workload.Meta {
	t.Helper()
	wl, err := workload.Lookup("credit-top1")
	if err != nil {
		t.Fatal(err)
	}
	return wl
}

func run(t *testing.T, s *enginetest.Server, wl workload.Meta, clients int, d time.Duration) driver.Result {
	t.Helper()
	res, err := driver.Run(context.Background(), driver.Config{Clients: clients, Warmup: 100 * time.Millisecond, Duration: d}, s.Dial, wl.New())
	if err != nil {
		t.Fatalf("driver: %v", err)
	}
	return res
}

// Under the fake clock the throughput is Capacity/StatementCost exactly,
// and an observer's fraction lowers it by exactly 1-1/(1+f).
func TestThroughputIsCapacityOverCost(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		s := enginetest.New(enginetest.Options{StatementCost: time.Millisecond, Capacity: 4,
			Overheads: map[string]float64{"slow": 0.25, "slow" + enginetest.HeldSuffix: 0.25}})
		if got := s.Throughput(); got != 4000 {
			t.Fatalf("Throughput() = %v; want 4000", got)
		}
		wl := creditTop1(t)
		if r := run(t, s, wl, 16, 2*time.Second); r.Measured != 8000 {
			t.Errorf("baseline: %d statements in 2 s; want 8000 (%v)", r.Measured, r.PerSecond)
		}
		a, err := s.Apply(ctx, observer.Observer{Name: "slow", Settings: map[string]string{"log": "all"}})
		if err != nil {
			t.Fatal(err)
		}
		if r := run(t, s, wl, 16, 2*time.Second); r.Measured != 6400 {
			t.Errorf("slow in force: %d statements in 2 s; want 6400", r.Measured)
		}
		if got, want := enginetest.ExpectedOverheadPct(0, 0.25), 20.0; math.Abs(got-want) > 1e-9 {
			t.Errorf("ExpectedOverheadPct(0, 0.25) = %v; want %v", got, want)
		}
		if err := a.Revert(ctx); err != nil {
			t.Fatal(err)
		}
		// Only as many statements in service as the capacity: fewer
		// sessions than that leave it idle.
		if r := run(t, s, wl, 2, time.Second); r.Measured != 2000 {
			t.Errorf("2 sessions: %d statements in 1 s; want 2000", r.Measured)
		}
	})
}

// In real time the schedule keeps the throughput, since a slot's next
// statement starts when the last one ended on it, not when its session
// woke up (sleeps end about a millisecond late): 256 sessions queue
// 25.6 ms of work ahead of each slot, several of the kernel's time slices,
// so that a machine busy with other tests does not leave a slot idle. It
// never goes much above the capacity: sessions that wake late at the
// window's start bring statements due before it into it (30 ms late is
// 10% of the window), a schedule that let more than the capacity in
// service would double it. A machine loaded enough to keep sessions from
// running for longer than the queued work lowers it, so a run below is
// tried again, up to three times.
func TestThroughputInRealTime(t *testing.T) {
	s := enginetest.New(enginetest.Options{})
	var got []float64
	for range 3 {
		r := run(t, s, creditTop1(t), 256, 300*time.Millisecond)
		ratio := r.Throughput / s.Throughput()
		if ratio > 1.1 {
			t.Fatalf("real time: %.0f statements/s, over the capacity's %.0f", r.Throughput, s.Throughput())
		}
		if ratio >= 0.85 {
			return
		}
		got = append(got, r.Throughput)
	}
	t.Errorf("real time: %.0f statements/s in three tries; want about %.0f", got, s.Throughput())
}

// Noise varies the speed second by second, the same for the same seed.
func TestNoise(t *testing.T) {
	perSecond := func(seed uint64) []int64 {
		var out []int64
		synctest.Test(t, func(t *testing.T) {
			s := enginetest.New(enginetest.Options{StatementCost: time.Millisecond, Noise: 0.05, Seed: seed})
			r := run(t, s, creditTop1(t), 8, 10*time.Second)
			out = make([]int64, len(r.PerSecond[0]))
			for _, session := range r.PerSecond {
				for i, n := range session {
					out[i] += n
				}
			}
		})
		return out
	}
	a, b, c := perSecond(1), perSecond(1), perSecond(2)
	if !reflect.DeepEqual(a, b) {
		t.Errorf("seed 1 twice: %v, %v", a, b)
	}
	if reflect.DeepEqual(a, c) {
		t.Errorf("seeds 1 and 2 gave the same seconds %v", a)
	}
	distinct := map[int64]bool{}
	for _, n := range a {
		distinct[n] = true
	}
	if len(distinct) < 5 {
		t.Errorf("noise 5%%: the seconds %v hardly vary", a)
	}
}

// Apply changes settings, Revert restores them (a setting the server did
// not have is gone again), preload libraries join the list.
func TestSettingsApplyRevert(t *testing.T) {
	ctx := context.Background()
	s := enginetest.New(enginetest.Options{Settings: map[string]string{"log_statement": "none"}})
	before, _ := s.Settings(ctx)
	changed, _ := s.ChangedSettings(ctx)
	if !reflect.DeepEqual(changed, map[string]string{"log_statement": "none"}) {
		t.Errorf("ChangedSettings() = %v; want the option's only", changed)
	}
	o := observer.Observer{Name: "audit", Preload: []string{"audit"}, Extensions: []string{"audit"},
		Settings: map[string]string{"log_statement": "all", "audit.log": "read"}}
	a, err := s.Apply(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	during, _ := s.Settings(ctx)
	want := maps.Clone(before)
	want["log_statement"], want["audit.log"], want[enginetest.PreloadSetting] = "all", "read", "audit"
	if !reflect.DeepEqual(during, want) {
		t.Errorf("in force: %v; want %v", during, want)
	}
	if got := s.InForce(); !reflect.DeepEqual(got, []string{"audit"}) {
		t.Errorf("InForce() = %v", got)
	}
	if err := a.Revert(ctx); err != nil {
		t.Fatal(err)
	}
	if err := a.Revert(ctx); err != nil {
		t.Errorf("second Revert: %v", err)
	}
	after, _ := s.Settings(ctx)
	if !reflect.DeepEqual(after, before) {
		t.Errorf("after Revert: %v; want %v", after, before)
	}
	if len(s.InForce()) != 0 {
		t.Errorf("InForce() after Revert = %v", s.InForce())
	}
}

// Split holds restart-only settings, libraries and extensions; an
// AlternateOff value is held, its own value switched.
func TestSplit(t *testing.T) {
	s := enginetest.New(enginetest.Options{RestartOnly: []string{"logging_collector"}})
	o := observer.Observer{Name: "log", Preload: []string{"lib"}, Extensions: []string{"ext"},
		Settings:     map[string]string{"logging_collector": "on", "log_statement": "all", "track": "all"},
		AlternateOff: map[string]string{"track": "none"}, Events: &observer.EventCounter{Source: "sql"}}
	held, sw, err := s.Split(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if held.Name != "log"+enginetest.HeldSuffix || !reflect.DeepEqual(held.Settings, map[string]string{"logging_collector": "on", "track": "none"}) ||
		!reflect.DeepEqual(held.Preload, []string{"lib"}) || !reflect.DeepEqual(held.Extensions, []string{"ext"}) || held.Events != nil {
		t.Errorf("held = %+v", held)
	}
	if sw.Name != "log" || !reflect.DeepEqual(sw.Settings, map[string]string{"log_statement": "all", "track": "all"}) || sw.Events == nil || len(sw.Preload) > 0 {
		t.Errorf("switched = %+v", sw)
	}
}

// The held part costs its own fraction, the switched part its own, the
// whole both; a held part that changes nothing (already in force) costs
// nothing.
func TestHeldAndSwitchedCosts(t *testing.T) {
	for _, tt := range []struct {
		name     string
		settings map[string]string
		apply    func(s *enginetest.Server, o observer.Observer) []observer.Observer
		want     int64 // statements in 1 s at 2000/s: log costs 1, its held part 0.25
	}{
		{"whole", nil, func(s *enginetest.Server, o observer.Observer) []observer.Observer { return []observer.Observer{o} }, 889},
		{"held part", nil, func(s *enginetest.Server, o observer.Observer) []observer.Observer {
			h, _, _ := s.Split(context.Background(), o)
			return []observer.Observer{h}
		}, 1600},
		{"switched part", nil, func(s *enginetest.Server, o observer.Observer) []observer.Observer {
			_, sw, _ := s.Split(context.Background(), o)
			return []observer.Observer{sw}
		}, 1000},
		{"held, then switched", nil, func(s *enginetest.Server, o observer.Observer) []observer.Observer {
			h, sw, _ := s.Split(context.Background(), o)
			return []observer.Observer{h, sw}
		}, 889},
		{"whole, held part already in force", map[string]string{"logging_collector": "on"},
			func(s *enginetest.Server, o observer.Observer) []observer.Observer { return []observer.Observer{o} }, 1000},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := enginetest.New(enginetest.Options{StatementCost: time.Millisecond, RestartOnly: []string{"logging_collector"},
					Settings: tt.settings, Overheads: map[string]float64{"log": 1, "log/held": 0.25}})
				o := observer.Observer{Name: "log", Settings: map[string]string{"logging_collector": "on", "log_statement": "all"}}
				for _, p := range tt.apply(s, o) {
					if _, err := s.Apply(context.Background(), p); err != nil {
						t.Fatal(err)
					}
				}
				if r := run(t, s, creditTop1(t), 8, time.Second); r.Measured < tt.want-1 || r.Measured > tt.want+1 {
					t.Errorf("%d statements in 1 s; want %d", r.Measured, tt.want)
				}
			})
		})
	}
}

// An observer with Events counts the statements holding the tag, from
// StartEvents until it is reverted, losing LoseEvents of them exactly.
func TestEvents(t *testing.T) {
	ctx := context.Background()
	for _, tt := range []struct {
		name      string
		lose      float64
		lostQuery string
		sqls      []string
		want      int64
		wantLost  int64 // -1: no lost counter
	}{
		{"all tagged", 0, "", []string{"SELECT 1 /* tag */"}, 100, -1},
		{"only tagged", 0, "", []string{"SELECT 1 /* tag */", "SELECT 2"}, 100, -1},
		{"a tenth lost", 0.1, "lost", []string{"SELECT 1 /* tag */"}, 90, 10},
		{"a third lost", 1.0 / 3, "", []string{"SELECT 1 /* tag */"}, 67, -1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := enginetest.New(enginetest.Options{StatementCost: time.Nanosecond, LoseEvents: tt.lose})
			a, err := s.Apply(ctx, observer.Observer{Name: "log", Settings: map[string]string{"log": "all"},
				Events: &observer.EventCounter{Source: "sql", Lost: tt.lostQuery}})
			if err != nil {
				t.Fatal(err)
			}
			sess, _ := s.Dial(ctx)
			defer sess.Close(ctx)
			var stmts []workload.Stmt
			for _, q := range tt.sqls {
				st, _ := sess.Prepare(ctx, q)
				stmts = append(stmts, st)
				st.Exec(ctx) // before StartEvents: not counted
			}
			ec, err := a.StartEvents(ctx, "tag")
			if err != nil || ec == nil {
				t.Fatalf("StartEvents: %v, %v", ec, err)
			}
			for range 100 {
				for _, st := range stmts {
					if err := st.Exec(ctx); err != nil {
						t.Fatal(err)
					}
				}
			}
			if err := a.Revert(ctx); err != nil {
				t.Fatal(err)
			}
			stmts[0].Exec(ctx) // after Revert: not counted
			if n, _ := ec.Count(ctx); n != tt.want {
				t.Errorf("Count() = %d; want %d", n, tt.want)
			}
			lc, ok := ec.(engine.LostCounter)
			if ok != (tt.wantLost >= 0) {
				t.Fatalf("LostCounter: %v; want %v", ok, tt.wantLost >= 0)
			}
			if ok {
				if n, has, err := lc.EngineLost(ctx); n != tt.wantLost || !has || err != nil {
					t.Errorf("EngineLost() = %d, %v, %v; want %d", n, has, err, tt.wantLost)
				}
			}
		})
	}
	// No Events: no counter.
	s := enginetest.New(enginetest.Options{})
	a, _ := s.Apply(ctx, observer.Observer{Name: "quiet"})
	if ec, err := a.StartEvents(ctx, "tag"); ec != nil || err != nil {
		t.Errorf("StartEvents of an observer without Events = %v, %v; want nil, nil", ec, err)
	}
}

func TestFaults(t *testing.T) {
	ctx := context.Background()
	wl := creditTop1(t)
	t.Run("dial", func(t *testing.T) {
		s := enginetest.New(enginetest.Options{Faults: enginetest.Faults{FailDial: 2}})
		if _, err := s.Dial(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Dial(ctx); err == nil || !strings.Contains(err.Error(), "dial 2") {
			t.Errorf("second Dial: %v; want it refused", err)
		}
		if _, err := s.Dial(ctx); err != nil {
			t.Errorf("third Dial: %v", err)
		}
	})
	t.Run("dropped connection", func(t *testing.T) {
		s := enginetest.New(enginetest.Options{StatementCost: time.Nanosecond, Faults: enginetest.Faults{DropExec: 3}})
		sess, _ := s.Dial(ctx)
		st, _ := sess.Prepare(ctx, "SELECT 1")
		for i := 1; i <= 4; i++ {
			err := st.Exec(ctx)
			if (i >= 3) != errors.Is(err, enginetest.ErrDropped) {
				t.Errorf("statement %d: %v", i, err)
			}
		}
		other, _ := s.Dial(ctx)
		st2, _ := other.Prepare(ctx, "SELECT 1")
		if err := st2.Exec(ctx); err != nil {
			t.Errorf("another session: %v", err)
		}
	})
	t.Run("statement errors", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			s := enginetest.New(enginetest.Options{StatementCost: time.Millisecond, Faults: enginetest.Faults{StatementErrorEvery: 10}})
			r := run(t, s, wl, 4, time.Second)
			if want := s.Stats().Statements / 10; r.Errors != want || len(r.ErrorSamples) == 0 {
				t.Errorf("%d statement errors of %d statements; want %d", r.Errors, s.Stats().Statements, want)
			}
		})
	})
	t.Run("apply, revert, left changed", func(t *testing.T) {
		o := observer.Observer{Name: "log", Settings: map[string]string{"log": "all"}}
		s := enginetest.New(enginetest.Options{Settings: map[string]string{"log": "none"}, Faults: enginetest.Faults{FailApply: "log"}})
		if _, err := s.Apply(ctx, o); err == nil {
			t.Error("Apply: no error")
		}
		if got, _ := s.Settings(ctx); got["log"] != "none" || len(s.InForce()) > 0 {
			t.Errorf("after a failed Apply: %v, in force %v", got, s.InForce())
		}
		s = enginetest.New(enginetest.Options{Settings: map[string]string{"log": "none"}, Faults: enginetest.Faults{FailRevert: "log"}})
		a, _ := s.Apply(ctx, o)
		if err := a.Revert(ctx); err == nil || !reflect.DeepEqual(s.InForce(), []string{"log"}) {
			t.Errorf("Revert: %v, in force %v; want an error, log still in force", err, s.InForce())
		}
		s = enginetest.New(enginetest.Options{Settings: map[string]string{"log": "none"}, Faults: enginetest.Faults{LeaveChanged: "log"}})
		a, _ = s.Apply(ctx, o)
		if err := a.Revert(ctx); err != nil {
			t.Fatal(err)
		}
		if got, _ := s.Settings(ctx); got["log"] != "all" || len(s.InForce()) > 0 {
			t.Errorf("after a Revert that leaves it: %v, in force %v; want log=all, nothing in force", got, s.InForce())
		}
	})
	t.Run("log full", func(t *testing.T) {
		s := enginetest.New(enginetest.Options{StatementCost: time.Nanosecond, Faults: enginetest.Faults{LogFullUnder: "log"}})
		sess, _ := s.Dial(ctx)
		st, _ := sess.Prepare(ctx, "SELECT 1")
		st.Exec(ctx)
		if n, _ := s.ServerFaults(); n != 0 {
			t.Errorf("%d complaints before the observer", n)
		}
		a, _ := s.Apply(ctx, observer.Observer{Name: "log"})
		st.Exec(ctx)
		st.Exec(ctx)
		a.Revert(ctx)
		if n, last := s.ServerFaults(); n != 1 || !strings.Contains(last, "No space left") {
			t.Errorf("ServerFaults() = %d, %q; want one complaint of a full device", n, last)
		}
	})
	t.Run("hook", func(t *testing.T) {
		var seen []enginetest.Op
		s := enginetest.New(enginetest.Options{StatementCost: time.Nanosecond, Faults: enginetest.Faults{Hook: func(op enginetest.Op) error {
			seen = append(seen, op)
			if op.Kind == enginetest.OpExec && op.N == 2 {
				return &workload.StatementError{Err: errors.New("refused")}
			}
			return nil
		}}})
		sess, _ := s.Dial(ctx)
		st, _ := sess.Prepare(ctx, "SELECT 1")
		st.Exec(ctx)
		if err := st.Exec(ctx); err == nil {
			t.Error("statement 2: no error")
		}
		if err := st.Exec(ctx); err != nil {
			t.Errorf("statement 3 after a statement error: %v", err)
		}
		want := []enginetest.Op{{Kind: enginetest.OpDial, N: 1}, {Kind: enginetest.OpExec, N: 1, SQL: "SELECT 1"},
			{Kind: enginetest.OpExec, N: 2, SQL: "SELECT 1"}, {Kind: enginetest.OpExec, N: 3, SQL: "SELECT 1"}}
		if !reflect.DeepEqual(seen, want) {
			t.Errorf("hook saw %+v; want %+v", seen, want)
		}
	})
}

func TestCheck(t *testing.T) {
	ctx := context.Background()
	o := observer.Observer{Name: "log", Settings: map[string]string{"logging_collector": "on", "log_statement": "all"}}
	s := enginetest.New(enginetest.Options{Unavailable: map[string]string{"log": "library log is not installed"}})
	if err := s.Check(ctx, o); err == nil || !strings.Contains(err.Error(), "not installed") {
		t.Errorf("Check of an unavailable observer: %v", err)
	}
	ext := enginetest.New(enginetest.Options{External: true, RestartOnly: []string{"logging_collector"}})
	if err := ext.Check(ctx, o); err == nil || !strings.Contains(err.Error(), "logging_collector") {
		t.Errorf("Check of a restart on an external server: %v", err)
	}
	ext = enginetest.New(enginetest.Options{External: true, RestartOnly: []string{"logging_collector"}, Settings: map[string]string{"logging_collector": "on"}})
	if err := ext.Check(ctx, o); err != nil {
		t.Errorf("Check with the restart part already in force: %v", err)
	}
	// A setting held at its AlternateOff value reloads: no restart.
	track := observer.Observer{Name: "track", Settings: map[string]string{"track": "all"}, AlternateOff: map[string]string{"track": "none"}}
	if err := ext.Check(ctx, track); err != nil {
		t.Errorf("Check of a reloadable setting with an off value: %v", err)
	}
	lib := observer.Observer{Name: "lib", Preload: []string{"lib"}}
	if err := ext.Check(ctx, lib); err == nil || !strings.Contains(err.Error(), enginetest.PreloadSetting) {
		t.Errorf("Check of a preload on an external server: %v", err)
	}
}

func TestLoadVerifySetupClose(t *testing.T) {
	ctx := context.Background()
	s := enginetest.New(enginetest.Options{})
	ds, err := dataset.Lookup("credit")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Verify(ctx, ds); err == nil {
		t.Error("Verify before Load: no error")
	}
	if err := s.Load(ctx, ds); err != nil {
		t.Fatal(err)
	}
	if err := s.Verify(ctx, ds); err != nil {
		t.Errorf("Verify after Load: %v", err)
	}
	bigger := ds
	bigger.Tables = append([]dataset.Table(nil), ds.Tables...)
	bigger.Tables[0].Rows++
	if err := s.Verify(ctx, bigger); err == nil {
		t.Error("Verify of other row counts: no error")
	}
	if err := s.Setup(ctx, []string{"CREATE TABLE x (v int)"}); err != nil || len(s.SetupStatements()) != 1 {
		t.Errorf("Setup: %v, %v", err, s.SetupStatements())
	}
	if v, err := s.Version(ctx); v != enginetest.DefaultVersion || err != nil {
		t.Errorf("Version() = %q, %v", v, err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Dial(ctx); err == nil {
		t.Error("Dial after Close: no error")
	}
}

// Every registered workload runs on a memory session: it does not
// interpret SQL, so it takes any dialect.
func TestEveryWorkloadRuns(t *testing.T) {
	ctx := context.Background()
	for _, name := range workload.Names() {
		t.Run(name, func(t *testing.T) {
			wl, err := workload.Lookup(name)
			if err != nil {
				t.Fatal(err)
			}
			s := enginetest.New(enginetest.Options{StatementCost: time.Nanosecond})
			a, _ := s.Apply(ctx, observer.Observer{Name: "log", Events: &observer.EventCounter{Source: "sql"}})
			ec, _ := a.StartEvents(ctx, wl.Tag)
			sess, _ := s.Dial(ctx)
			defer sess.Close(ctx)
			op, err := wl.New().Worker(ctx, sess, 0)
			if err != nil {
				t.Fatalf("Worker: %v", err)
			}
			for range 20 {
				if err := op(ctx); err != nil && !errors.Is(err, workload.ErrDone) {
					t.Fatalf("op: %v", err)
				}
			}
			if n, _ := ec.Count(ctx); n == 0 {
				t.Errorf("no statement of %s carried its tag %q", name, wl.Tag)
			}
		})
	}
}
