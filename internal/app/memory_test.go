package app

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/obsbench/obsbench/internal/driver"
	"github.com/obsbench/obsbench/internal/engine"
	"github.com/obsbench/obsbench/internal/report"
	// The real engines register for the study specs, which name them;
	// nothing here reaches their servers.
	"github.com/obsbench/obsbench/internal/engine/enginetest"
	_ "github.com/obsbench/obsbench/internal/engine/mariadb"
	_ "github.com/obsbench/obsbench/internal/engine/postgres"
	"github.com/obsbench/obsbench/internal/observer"
	"github.com/obsbench/obsbench/internal/result"
	"github.com/obsbench/obsbench/internal/spec"
)

// memEngine registers the in-memory target as an engine, as a real engine
// package does: the application layer finds it by name like any other.
type memEngine struct{}

// memCost is what the test observer "slow" adds to every statement: 25%
// more service time, 20% less throughput.
const memCost = 0.25

func (memEngine) Info() engine.Info {
	return engine.Info{Name: "memory", Namespace: "database", AddOn: "extension", Managed: true, RestartsApply: true}
}

func (memEngine) Open(ctx context.Context, o engine.Options) (engine.Server, error) {
	if !o.Managed() {
		return nil, spec.Invalidf("--dsn: the memory engine has no external servers")
	}
	return enginetest.New(enginetest.Options{StatementCost: 500 * time.Microsecond, Capacity: 1, Noise: 0.02, Seed: 7,
		Overheads: map[string]float64{"slow": memCost}}), nil
}

var errNoServer = errors.New("the memory engine reaches no server")

func (memEngine) Planner(string) (engine.Planner, error) { return nil, errNoServer }
func (memEngine) Inspect(context.Context, string, []observer.Observer) (*engine.Inspection, error) {
	return nil, errNoServer
}
func (memEngine) Undo(context.Context, string, []json.RawMessage) ([]string, error) {
	return nil, errNoServer
}

func init() { engine.Register(memEngine{}) }

// memSpec is a small rounds experiment of the observer "slow" on the
// memory engine, its observers from a catalog file of its own.
func memSpec(t *testing.T) spec.Spec {
	t.Helper()
	dir := t.TempDir()
	cat := filepath.Join(dir, "memory.yaml")
	yaml := "- name: baseline\n  engine: memory\n  description: nothing\n" +
		"- name: slow\n  engine: memory\n  description: 25% more work per statement\n  settings:\n    slow: \"on\"\n"
	if err := os.WriteFile(cat, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	s := spec.Default()
	s.Engine, s.ObserverFile, s.Observers = "memory", cat, []string{"slow"}
	s.Method, s.Rounds, s.Duration, s.Warmup, s.Clients, s.Seed = "rounds", 6, 2*time.Second, 0, 4, 11
	s.Out = filepath.Join(dir, "out")
	return s
}

// chosen is s with the settings of these flags chosen.
func chosen(s spec.Spec, names ...string) spec.Spec {
	s.Choose(names...)
	return s
}

// A known overhead injected into the memory engine is found by the whole
// path a command takes: spec, registry, experiment, summary, report.
func TestExecuteFindsKnownOverhead(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := memSpec(t)
		var stdout, stderr bytes.Buffer
		if err := Execute(t.Context(), chosen(s, "clients", "warmup"), Output{Stdout: &stdout, Stderr: &stderr}); err != nil {
			t.Fatalf("Execute: %v\n%s", err, stderr.String())
		}
		sum, err := result.ReadSummary(filepath.Join(s.Out, "summary.json"))
		if err != nil {
			t.Fatal(err)
		}
		want := enginetest.ExpectedOverheadPct(0, memCost)
		var got *result.OverheadSummary
		for _, c := range sum.Conditions {
			if c.Name == "slow" {
				got = c.Overhead
			}
		}
		if !got.Measured() || got.CILow > want || got.CIHigh < want || !got.Significant {
			t.Fatalf("slow: %+v; want an interval holding %.1f%%", got, want)
		}
		if !strings.Contains(stdout.String(), "slow") {
			t.Errorf("report lacks the observer:\n%s", stdout.String())
		}
	})
}

// A sweep is one experiment per session count, each recorded as the one
// experiment it is (its spec has the count as Clients, no Sessions).
func TestSweepRecordsOneSpecPerCount(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := memSpec(t)
		s.Sessions, s.Rounds = []int{1, 2}, 2
		var stdout, stderr bytes.Buffer
		if err := Execute(t.Context(), chosen(s, "warmup", "sessions"), Output{Stdout: &stdout, Stderr: &stderr}); err != nil {
			t.Fatalf("Execute: %v\n%s", err, stderr.String())
		}
		rec, ok, err := report.ReadSweep(s.Out)
		if err != nil || !ok || len(rec.Points) != 2 {
			t.Fatalf("sweep = %+v, %v, %v; want two points", rec, ok, err)
		}
		for i, n := range []int{1, 2} {
			one, err := ReadSpec(filepath.Join(s.Out, rec.Points[i].Dir))
			if err != nil {
				t.Fatal(err)
			}
			if one.Clients != n || len(one.Sessions) != 0 || rec.Points[i].Summary.Clients != n {
				t.Errorf("point %d: spec clients %d sessions %v, summary clients %d; want %d, none, %d",
					i, one.Clients, one.Sessions, rec.Points[i].Summary.Clients, n, n)
			}
		}
		if !strings.Contains(stdout.String(), "concurrency sweep") {
			t.Errorf("no sweep table:\n%s", stdout.String())
		}
	})
}

// --resume reads the spec back and runs only what did not finish: the
// recorded spec is the one the experiment ran, and the resumed results
// are whole.
func TestResumeRunsTheRest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := memSpec(t)
		s.Rounds = 3
		var stdout, stderr bytes.Buffer
		out := Output{Stdout: &stdout, Stderr: &stderr}
		if err := Execute(t.Context(), chosen(s, "clients", "warmup"), out); err != nil {
			t.Fatalf("Execute: %v\n%s", err, stderr.String())
		}
		rec, err := ReadSpec(s.Out)
		if err != nil {
			t.Fatal(err)
		}
		// The driver's threads were not given: the record says how many
		// ran, the default for its sessions.
		want := s
		want.DriverThreads = driver.DefaultProcs(s.Clients)
		if !reflect.DeepEqual(rec, want) {
			t.Errorf("recorded spec:\n got %+v\nwant %+v", rec, want)
		}
		// As if killed after its second run.
		path := filepath.Join(s.Out, "results.jsonl")
		runs, err := result.ReadRuns(path)
		if err != nil || len(runs) != 6 {
			t.Fatalf("%d runs, %v; want 2 conditions x 3 rounds", len(runs), err)
		}
		if err := result.Rewrite(path, runs[:2]); err != nil {
			t.Fatal(err)
		}
		stderr.Reset()
		if err := Resume(t.Context(), s.Out, out); err != nil {
			t.Fatalf("Resume: %v\n%s", err, stderr.String())
		}
		if !strings.Contains(stderr.String(), "2 run(s) finished, the rest run now") {
			t.Errorf("stderr lacks the resume note:\n%s", stderr.String())
		}
		again, err := result.ReadRuns(path)
		if err != nil || len(again) != 6 {
			t.Fatalf("after resume: %d runs, %v; want 6", len(again), err)
		}
		for i, r := range again[:2] {
			if r.Seq != runs[i].Seq || r.Driver.Executed != runs[i].Driver.Executed {
				t.Errorf("finished run %d was run again", r.Seq)
			}
		}
	})
}

// --resume refuses an experiment whose script changed since it began:
// its finished runs measured the old one.
func TestResumeRefusesAChangedScript(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := memSpec(t)
		s.Rounds = 2
		script := filepath.Join(t.TempDir(), "mine.sql")
		if err := os.WriteFile(script, []byte("SELECT 1;\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		s.Workload, s.Script.Files = "sql", []string{script}
		var stdout, stderr bytes.Buffer
		out := Output{Stdout: &stdout, Stderr: &stderr}
		if err := Execute(t.Context(), chosen(s, "clients", "warmup"), out); err != nil {
			t.Fatalf("Execute: %v\n%s", err, stderr.String())
		}
		if err := os.WriteFile(script, []byte("SELECT 2;\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		err := Resume(t.Context(), s.Out, out)
		var ue usageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), "script "+script+" changed since the experiment began (SHA-256 ") {
			t.Errorf("Resume after the script changed: %v; want a usage error naming the script", err)
		}
	})
}
