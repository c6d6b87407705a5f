// Command instructions compares obsbench's two ways of pricing an
// observer on one machine: counted (--method instructions: the server's
// user-space instructions per statement under valgrind) and timed
// (--method rounds: throughput on freshly restarted servers). It runs the
// counted experiment twice, alone and with another process keeping one
// core busy, and the timed one once, on the same observers, and writes a
// markdown report side by side. See README.md.
package main

import (
	"cmp"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/obsbench/obsbench/bench/internal/sidebyside"
	"github.com/obsbench/obsbench/internal/app"
	"github.com/obsbench/obsbench/internal/counting"
	_ "github.com/obsbench/obsbench/internal/engine/mariadb"
	_ "github.com/obsbench/obsbench/internal/engine/postgres"
	"github.com/obsbench/obsbench/internal/result"
	"github.com/obsbench/obsbench/internal/spec"
)

type config struct {
	engine             string
	observers          []string
	countRounds        int
	statements, warmup int
	timedRounds        int
	seed               uint64
	dir, out           string
	command            string
}

func main() {
	var c config
	flag.StringVar(&c.engine, "engine", "postgres", "postgres or mariadb")
	obs := flag.String("observers", "", "observers, comma-separated (default: the engine's default set and a filtered-out variant)")
	flag.IntVar(&c.countRounds, "count-rounds", 3, "rounds of each counted experiment")
	flag.IntVar(&c.statements, "count-statements", 2000, "statements counted per run")
	flag.IntVar(&c.warmup, "count-warmup", 200, "statements before the counted ones")
	flag.IntVar(&c.timedRounds, "timed-rounds", 6, "rounds of the timed experiment (--method rounds, 8 s runs)")
	flag.Uint64Var(&c.seed, "seed", 0, "seed of the run orders (default: from the clock)")
	flag.StringVar(&c.dir, "dir", "", "directory for the experiments' results (default: a temporary one, removed)")
	flag.StringVar(&c.out, "out", "", "markdown report to write (default: bench/instructions/RESULT.md, RESULT-mariadb.md for mariadb)")
	flag.Parse()
	if c.out == "" {
		c.out = map[string]string{"mariadb": "bench/instructions/RESULT-mariadb.md"}[c.engine]
		c.out = cmp.Or(c.out, "bench/instructions/RESULT.md")
	}
	if *obs == "" {
		*obs = defaultObservers[c.engine]
	}
	c.observers = strings.Split(*obs, ",")
	c.seed = sidebyside.Seed(c.seed)
	c.command = sidebyside.Command("instructions")
	sidebyside.Main("instructions", func(ctx context.Context) error { return run(ctx, c) })
}

// defaultObservers are each engine's default observers and a variant
// that filters everything out.
var defaultObservers = map[string]string{
	"postgres": "auto-explain-analyze,log-statements-file,pg-stat-statements,pgaudit-read,pgaudit-filtered-out",
	"mariadb":  "general-log-file,perf-schema,server-audit-file,slow-log-all,server-audit-filtered",
}

func run(ctx context.Context, c config) error {
	dir := c.dir
	if dir == "" {
		d, err := os.MkdirTemp("", "obsbench-instructions-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(d)
		dir = d
	}
	alone, err := counted(ctx, c, filepath.Join(dir, "counted"))
	if err != nil {
		return err
	}
	hogged, hogCPU, err := withHog(func() (counting.Instructions, error) { return counted(ctx, c, filepath.Join(dir, "counted-hog")) })
	if err != nil {
		return err
	}
	timed, err := timedRun(ctx, c, filepath.Join(dir, "timed"))
	if err != nil {
		return err
	}
	report := render(c, alone, hogged, hogCPU, timed)
	fmt.Print(report)
	return os.WriteFile(c.out, []byte(report), 0o644)
}

// counted runs obsbench run --method instructions.
func counted(ctx context.Context, c config, out string) (counting.Instructions, error) {
	s := spec.Default()
	s.Engine, s.Method, s.Observers, s.Rounds, s.Seed, s.Out = c.engine, result.MethodInstructions, c.observers, c.countRounds, c.seed, out
	s.Count.Statements, s.Count.Warmup = c.statements, c.warmup
	s.Choose("engine", "method", "observers", "rounds", "seed", "out", "count-statements", "count-warmup")
	if err := app.Execute(ctx, s, app.Output{Stdout: io.Discard, Stderr: os.Stderr}); err != nil {
		return counting.Instructions{}, err
	}
	var rec counting.Instructions
	b, err := os.ReadFile(filepath.Join(out, "instructions.json"))
	if err == nil {
		err = json.Unmarshal(b, &rec)
	}
	return rec, err
}

// timedRun runs obsbench run --method rounds.
func timedRun(ctx context.Context, c config, out string) (result.Summary, error) {
	s := spec.Default()
	s.Engine, s.Method, s.Observers, s.Rounds, s.Seed, s.Out = c.engine, result.MethodRounds, c.observers, c.timedRounds, c.seed, out
	s.Count.After = false // counted apart, with and without a hog
	s.Choose("engine", "method", "observers", "rounds", "seed", "out")
	if err := app.Execute(ctx, s, app.Output{Stdout: io.Discard, Stderr: os.Stderr}); err != nil {
		return result.Summary{}, err
	}
	return result.ReadSummary(filepath.Join(out, "summary.json"))
}

// withHog runs f while a shell loop keeps one core busy, and returns
// the loop's CPU time as a share of f's wall time.
func withHog[T any](f func() (T, error)) (T, float64, error) {
	hog := exec.Command("sh", "-c", "while :; do :; done")
	if err := hog.Start(); err != nil {
		var zero T
		return zero, 0, err
	}
	began := time.Now()
	v, err := f()
	wall := time.Since(began)
	hog.Process.Kill()
	hog.Wait()
	cpu := hog.ProcessState.UserTime() + hog.ProcessState.SystemTime()
	return v, cpu.Seconds() / wall.Seconds(), err
}

func render(c config, alone, hogged counting.Instructions, hogCPU float64, timed result.Summary) string {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	who, others := "backend", "other processes"
	if c.engine == "mariadb" {
		who, others = "session", "other threads"
	}
	p("# Counted and timed: the same observers, two methods")
	p("")
	p("- command: `%s`", c.command)
	p("- date: %s", time.Now().UTC().Format("2006-01-02 15:04:05 UTC"))
	p("- machine: %s", sidebyside.Machine())
	p("- server: managed %s %s, workload %s", c.engine, alone.Server, alone.Workload)
	p("- counted: `--engine %s --method instructions --rounds %d --count-statements %d --count-warmup %d`, seed %d; then the same with a CPU hog (`sh -c 'while :; do :; done'`, %.0f%% of a core over the experiment)",
		c.engine, c.countRounds, c.statements, c.warmup, c.seed, 100*hogCPU)
	p("- timed: `--engine %s --method rounds --rounds %d` (8 s runs after 2 s, %d sessions), seed %d", c.engine, c.timedRounds, timed.Clients, c.seed)
	p("")
	p("| observer | counted: %s instr/stmt change (%%) [95%% CI] | counted with the hog | timed: throughput overhead (%%) [95%% CI] | counted: %s instr/run change (%%) | %s syscalls/stmt (baseline %s) | s/run counted |",
		who, others, who, syscalls(alone.Conditions[0].Syscalls))
	p("|---|---:|---:|---:|---:|---:|---:|")
	timedBy := map[string]*result.OverheadSummary{}
	for _, cs := range timed.Conditions {
		timedBy[cs.Name] = cs.Overhead
	}
	var differ []string
	for i, cond := range alone.Conditions {
		if i == 0 {
			continue
		}
		var hog string
		for _, h := range hogged.Conditions {
			if h.Name == cond.Name {
				hog = change(h.BackendChange)
			}
		}
		p("| %s | %s | %s | %s | %s | %s | %.0f |", cond.Name, change(cond.BackendChange), hog, overhead(timedBy[cond.Name]),
			change(cond.HelperChange), syscalls(cond.Syscalls), cond.Seconds)
		if d := difference(cond, alone.Conditions[0], timedBy[cond.Name], others); d != "" {
			differ = append(differ, d)
		}
	}
	p("")
	p("Baseline: %.0f instructions per statement (spread of its runs %.4f%%; with the hog %.0f, spread %.4f%%).",
		alone.Conditions[0].Backend, alone.Conditions[0].BackendSpreadPct, hogged.Conditions[0].Backend, hogged.Conditions[0].BackendSpreadPct)
	p("")
	if len(differ) == 0 {
		p("Where they differ: nowhere; every counted change lies inside the timed interval.")
	} else {
		p("Where they differ (the counted change outside the timed interval), with what the counted figures show beside the %s's count:", who)
		p("")
		for _, d := range differ {
			p("- %s", d)
		}
	}
	p("")
	p("Scope of the count: %s.", alone.Scope)
	return b.String()
}

// difference says why an observer's counted change lies outside its timed
// interval, from what the count itself shows: the other processes' or
// threads' work, system calls; else waiting or contention, which it does
// not see. "" when they agree or the timed run measured nothing.
func difference(c, base result.CountedCondition, timed *result.OverheadSummary, others string) string {
	if c.BackendChange == nil || !timed.Measured() || (c.BackendChange.Pct >= timed.CILow && c.BackendChange.Pct <= timed.CIHigh) {
		return ""
	}
	if c.BackendChange.Pct > timed.CIHigh {
		return fmt.Sprintf("%s: counted %+.2f%%, timed %.1f%% [%.1f, %.1f]: the count is above the timed interval. "+
			"It is the CPU work added per statement, one session at a time; the timed throughput of 16 sessions also moves with what is not the server's CPU "+
			"(the driver on the same 2 cores, waiting), and its interval, %.1f points wide, is the timing's noise.",
			c.Name, c.BackendChange.Pct, timed.Pct, timed.CILow, timed.CIHigh, timed.CIHigh-timed.CILow)
	}
	var why []string
	if h := c.HelperChange; h != nil && h.Pct >= 1 {
		why = append(why, fmt.Sprintf("the %s work %+.1f%% more, on the machine's other core", others, h.Pct))
	}
	if c.Syscalls >= 0 && base.Syscalls >= 0 && c.Syscalls-base.Syscalls >= 0.05 {
		why = append(why, fmt.Sprintf("%.2f more system calls per statement (the kernel's work is not counted)", c.Syscalls-base.Syscalls))
	}
	if len(why) == 0 {
		why = append(why, "nothing counted explains it: waiting or contention, which the count does not see")
	}
	return fmt.Sprintf("%s: counted %+.2f%%, timed %.1f%% [%.1f, %.1f]: %s.", c.Name, c.BackendChange.Pct, timed.Pct, timed.CILow, timed.CIHigh, strings.Join(why, "; "))
}

func change(c *result.CountChange) string {
	if c == nil {
		return "-"
	}
	return fmt.Sprintf("%+.2f [%+.2f, %+.2f]", c.Pct, c.Low, c.High)
}

func overhead(o *result.OverheadSummary) string {
	if !o.Measured() {
		return "not measured"
	}
	return fmt.Sprintf("%.1f [%.1f, %.1f]", o.Pct, o.CILow, o.CIHigh)
}

func syscalls(v float64) string {
	if v < 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.2f", v)
}
