package app

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/obsbench/obsbench/internal/experiment"
	"github.com/obsbench/obsbench/internal/process"
	"github.com/obsbench/obsbench/internal/result"
	"github.com/obsbench/obsbench/internal/spec"
)

// fakeCgroups makes dir look like a machine with cgroup v1's cpu and
// cpuacct controllers (what cgroup.Find looks for) and returns it, the
// root to resolve an experiment on.
func fakeCgroups(t *testing.T, dir string) string {
	t.Helper()
	for _, f := range []string{"cpu/cpu.cfs_quota_us", "cpuacct/cpuacct.usage"} {
		p := filepath.Join(dir, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("-1\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// With no --method, a run is a duet wherever twins can run, and auto
// otherwise with the reason; a method given is kept.
func TestMethodChosen(t *testing.T) {
	const dsn, twin = "host=/nonexistent port=5432 user=x", "host=/nonexistent port=5433 user=x"
	for _, tt := range []struct {
		name    string
		edit    func(*spec.Spec)
		given   []string
		noGroup bool
		want    result.Method
		why     string // part of the reason for auto; "" for a duet
	}{
		{"managed", func(*spec.Spec) {}, nil, false, "duet", ""},
		{"managed mariadb", func(s *spec.Spec) { s.Engine = "mariadb" }, []string{"engine"}, false, "duet", ""},
		{"external with its twin", func(s *spec.Spec) { s.DSN, s.TwinDSN = dsn, twin }, []string{"dsn", "twin-dsn"}, false, "duet", ""},
		{"external alone", func(s *spec.Spec) { s.DSN = dsn }, []string{"dsn"}, false, "split", "has no twin; give --twin-dsn"},
		{"external alone, unsplittable", func(s *spec.Spec) { s.DSN, s.Observers = dsn, []string{"pg-wait-sampling"} }, []string{"dsn"}, false, "auto", "has no twin; give --twin-dsn"},
		{"external alone, mixed", func(s *spec.Spec) { s.DSN, s.Observers = dsn, []string{"log-statements-file", "pg-wait-sampling"} }, []string{"dsn"}, false, "auto", "has no twin; give --twin-dsn"},
		{"external alone, odd sessions", func(s *spec.Spec) { s.DSN, s.Clients = dsn, 3 }, []string{"dsn", "clients"}, false, "auto", "has no twin; give --twin-dsn"},
		{"standby", func(s *spec.Spec) { s.Standby = "sync" }, []string{"standby"}, false, "auto", "--standby"},
		{"workers", func(s *spec.Spec) { s.Workers = 2 }, []string{"workers"}, false, "auto", "--workers"},
		{"sampler's cost", func(s *spec.Spec) { s.MeasureCollectors, s.Waits = true, 10*time.Millisecond }, []string{"measure-collectors", "waits"}, false, "duet", ""},
		{"fixed work", func(s *spec.Spec) { s.Workload, s.Params = "dss-mix", map[string]int{"blocks": 1} }, []string{"workload", "blocks"}, false, "duet", ""},
		{"no cgroup", func(*spec.Spec) {}, nil, true, "auto", "no usable cgroup"},
		{"given", func(s *spec.Spec) { s.Method = "rounds" }, []string{"method"}, false, "rounds", ""},
		{"closed loop", func(s *spec.Spec) { s.ClosedLoop = true }, []string{"closed-loop"}, false, "duet", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			root := fakeCgroups(t, t.TempDir())
			if tt.noGroup {
				root = filepath.Join(dir, "none")
			}
			s := spec.Default()
			s.Observers, s.AllowChanges, s.Out = []string{"log-statements-file"}, true, filepath.Join(dir, "out")
			if tt.name == "managed mariadb" {
				s.Observers = []string{"general-log-file"}
			}
			tt.edit(&s)
			c, err := resolve(chosen(s, append(tt.given, "observers", "allow-changes")...), false, Output{Env: process.Env{CgroupRoot: root}})
			if err != nil {
				t.Fatalf("Resolve: %v", err)
			}
			if c.Method != tt.want || c.methodChosen != (tt.name != "given") || !strings.Contains(c.methodWhy, tt.why) || (tt.why == "") != (c.methodWhy == "") {
				t.Errorf("method %q (chosen %v, why %q); want %q, why with %q", c.Method, c.methodChosen, c.methodWhy, tt.want, tt.why)
			}
			phase := DefaultDuetDuration
			if c.wl.FixedWork() {
				phase = time.Hour // fixed work: --duration is only a cap
			}
			if split := c.splitByDefault; (tt.name == "external alone, mixed") != (c.Method == result.MethodAuto && slices.Equal(split, []string{"log-statements-file"})) {
				t.Errorf("observers by split beside auto: %q", split)
			}
			if (tt.want == "duet" || tt.want == "split") && (c.Rounds != DefaultDuetPhases || c.Duration != phase) {
				t.Errorf("a chosen duet runs %d phases of %v; want %d of %v", c.Rounds, c.Duration, DefaultDuetPhases, phase)
			}
			// A managed duet runs at half load unless it is fixed work or
			// told otherwise; nothing else has a rate no one asked for.
			atLoad := tt.want == "duet" && s.DSN == "" && !c.wl.FixedWork() && !s.ClosedLoop
			if want := map[bool]float64{true: spec.DefaultDuetLoad}[atLoad]; c.LoadPct != want || c.loadDefaulted != atLoad {
				t.Errorf("load %g%% (defaulted %v); want %g%%", c.LoadPct, c.loadDefaulted, want)
			}
			if tt.want == "duet" && !c.wl.FixedWork() && c.Warmup != DefaultDuetWarmup {
				t.Errorf("a chosen duet warms up for %v; want %v", c.Warmup, DefaultDuetWarmup)
			}
		})
	}
}

// A setting a duet cannot take, given without --method, is refused with a
// pointer to the method that takes it.
func TestMethodChosenRefusalNamesTheDefault(t *testing.T) {
	root := fakeCgroups(t, t.TempDir())
	s := spec.Default()
	s.Rounds, s.Out = 5, filepath.Join(t.TempDir(), "out")
	_, err := resolve(chosen(s, "rounds"), false, Output{Env: process.Env{CgroupRoot: root}})
	if err == nil || !strings.Contains(err.Error(), "--rounds 5: a duet takes its phases in pairs") || !strings.Contains(err.Error(), "--method auto") {
		t.Errorf("Resolve: %v; want the duet's refusal of an odd --rounds, naming --method auto", err)
	}
}

// --max-time sizes a duet's phases when --rounds is not given: as many as
// the arms' phases fit, in blocks of four, never fewer than the default.
func TestDuetBudget(t *testing.T) {
	root := fakeCgroups(t, t.TempDir())
	for _, tt := range []struct {
		method, dsn string
		maxTime     time.Duration
		given       []string
		want        int
	}{
		// Two arms (the A/A and the observer) of 2.5 s phases and their
		// restarts: 300 s / (2 x 3.3 s) = 45, in blocks of four 44. At
		// the default half load the capacity probes take up to 4 x 4.8 s
		// first: 280.8 s / 6.6 s = 42, in blocks of four 40.
		{"duet", "", 5 * time.Minute, []string{"max-time", "closed-loop"}, 44},
		{"duet", "", 5 * time.Minute, []string{"max-time"}, 40},
		{"duet", "", time.Minute, []string{"max-time"}, DefaultDuetPhases},
		{"duet", "", 5 * time.Minute, []string{"max-time", "rounds"}, 8},
		{"duet", "", 5 * time.Minute, nil, DefaultDuetPhases}, // the default --max-time bounds alternation only
		// --target-resolution grows the phases from the default's as the
		// A/A arm asks; --max-time only caps them.
		{"duet", "", 5 * time.Minute, []string{"max-time", "target-resolution"}, DefaultDuetPhases},
		// A split on a managed server restarts it each phase as a duet
		// does; on an external one nothing restarts: 300 s / (2 x 2.75 s)
		// = 54, in blocks of four 52.
		{"split", "", 5 * time.Minute, []string{"max-time"}, 44},
		{"split", "host=/nowhere", 5 * time.Minute, []string{"max-time"}, 52},
	} {
		s := spec.Default()
		s.Method, s.DSN, s.Observers, s.Rounds, s.MaxTime, s.Out = result.Method(tt.method), tt.dsn, []string{"log-statements-file"}, 8, tt.maxTime, filepath.Join(t.TempDir(), "out")
		if tt.dsn != "" {
			s.AllowChanges = true
			tt.given = append(tt.given, "dsn", "allow-changes")
		}
		if slices.Contains(tt.given, "target-resolution") {
			s.TargetResolution = 2
		}
		s.ClosedLoop = slices.Contains(tt.given, "closed-loop")
		c, err := resolve(chosen(s, append(tt.given, "observers", "method")...), false, Output{Env: process.Env{CgroupRoot: root}})
		if err != nil {
			t.Fatal(err)
		}
		if c.Rounds != tt.want {
			t.Errorf("%s, --max-time %v with %v: %d phases; want %d", tt.method, tt.maxTime, tt.given, c.Rounds, tt.want)
		}
		if w := unusedFlags(c, []experiment.Arm{{Method: experiment.MethodDuet}}); len(w) > 0 && slices.Contains(tt.given, "max-time") && !slices.Contains(tt.given, "rounds") {
			t.Errorf("--max-time %v with %v: warned %q; the duet uses them", tt.maxTime, tt.given, w)
		}
	}
}

// The flags of a fixed rate are taken where the method chosen runs at
// one, the default duet's half load included, and refused, naming what
// keeps the run a closed loop, where it does not.
func TestOpenFlagsAfterTheMethod(t *testing.T) {
	root := fakeCgroups(t, t.TempDir())
	limit := 5.0
	for _, tt := range []struct {
		name  string
		edit  func(*spec.Spec)
		given []string
		want  string // part of the refusal; "" when taken
	}{
		{"default duet, gate", func(s *spec.Spec) { s.MaxLatencyAdded = &limit }, []string{"max-latency-added"}, ""},
		{"default duet, limit", func(s *spec.Spec) { s.LatencyLimit = 10 * time.Millisecond }, []string{"latency-limit"}, ""},
		{"closed loop", func(s *spec.Spec) { s.MaxLatencyAdded, s.ClosedLoop = &limit, true }, []string{"max-latency-added", "closed-loop"},
			"--max-latency-added gates the p99 latency an observer adds at a fixed rate: this duet is a closed loop (--closed-loop)"},
		{"fixed work", func(s *spec.Spec) {
			s.LatencyLimit, s.Workload, s.Params = time.Millisecond, "dss-mix", map[string]int{"blocks": 1}
		}, []string{"latency-limit", "workload", "blocks"}, "--latency-limit counts units late against their schedule: this duet is a closed loop (a workload of fixed work)"},
		{"rounds", func(s *spec.Spec) { s.MaxLatencyAdded, s.Method = &limit, "rounds" }, []string{"max-latency-added", "method"},
			"at a fixed rate: give --rate or --load too"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := spec.Default()
			s.Observers, s.Out = []string{"log-statements-file"}, filepath.Join(t.TempDir(), "out")
			tt.edit(&s)
			c, err := resolve(chosen(s, append(tt.given, "observers")...), false, Output{Env: process.Env{CgroupRoot: root}})
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("Resolve: %v", err)
			case tt.want == "" && c.LoadPct != spec.DefaultDuetLoad:
				t.Errorf("load %g%%; want the default duet's %d%%", c.LoadPct, spec.DefaultDuetLoad)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("Resolve: %v; want an error with %q", err, tt.want)
			}
		})
	}
}
