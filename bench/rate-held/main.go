// Command rate-held checks issue 69's first goal on obsbench itself: the
// rate asked (obsbench run --rate) is held within ±1% below capacity, on
// PostgreSQL and MariaDB, with the sessions in obsbench's own process,
// in worker processes (--workers) and in a duet's twins. Each setup is
// one obsbench run; every run's windows are summed, since one window's
// Poisson count spreads by its square root. It writes
// bench/rate-held/RESULT.md and each run's text output beside it.
package main

import (
	"context"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/obsbench/obsbench/bench/internal/sidebyside"
	"github.com/obsbench/obsbench/internal/result"
)

var logf = sidebyside.Logger("rate-held")

type config struct {
	rate     float64
	rounds   int
	duration time.Duration
	engines  []string
	setups   []string
	seed     uint64
	dir      string
	command  string
}

// The setups: where the sessions run.
const (
	setupLocal   = "local"   // --method rounds, the sessions in obsbench's process
	setupWorkers = "workers" // --method rounds --workers 2
	setupDuet    = "duet"    // --method duet, each twin's load in a worker of its own
)

// observers are the cheap observers each engine's runs measure beside
// the baseline: the rate must hold with an observer in force too.
var observers = map[string]string{"postgres": "log-filtered-out", "mariadb": "slow-log-filtered-out"}

func main() {
	var c config
	flag.Float64Var(&c.rate, "rate", 1000, "the arrival rate asked (--rate), units a second over all sessions")
	flag.IntVar(&c.rounds, "rounds", 4, "--rounds of each run (a duet: phases an arm, even)")
	flag.DurationVar(&c.duration, "duration", 10*time.Second, "--duration of each run (a duet: each phase)")
	engines := flag.String("engines", "postgres,mariadb", "the managed engines")
	setups := flag.String("setups", strings.Join([]string{setupLocal, setupWorkers, setupDuet}, ","), "where the sessions run")
	flag.Uint64Var(&c.seed, "seed", 0, "the runs' seed (0: from the clock)")
	flag.StringVar(&c.dir, "dir", "bench/rate-held", "where RESULT.md and the outputs go")
	flag.Parse()
	c.seed = sidebyside.Seed(c.seed)
	c.engines, c.setups = strings.Split(*engines, ","), strings.Split(*setups, ",")
	c.command = sidebyside.Command("rate-held")
	sidebyside.Main("rate-held", func(ctx context.Context) error { return run(ctx, c) })
}

// held is what one setup's windows add up to.
type held struct {
	engine, setup string
	args          []string
	windows       int
	completed     int64
	scheduled     int64   // the arrivals the schedule drew in the windows
	started       int64   // those of them a session took up
	asked         float64 // the rate times each window's seconds, summed
	rounds        int     // the independent schedules the windows share
	saturated     int
	lagP99        float64 // the largest window's
	elapsed       time.Duration
}

func (h held) ratio() float64 { return float64(h.completed) / h.asked }

// kept is the share of the schedule's arrivals that a session took up:
// what the sessions held of the schedule, whatever it drew.
func (h held) kept() float64 { return float64(h.started) / float64(h.scheduled) }

// drawn is the schedule's arrivals over the rate asked: the draw of a
// Poisson schedule, not something the sessions did.
func (h held) drawn() float64 { return float64(h.scheduled) / h.asked }

// se is drawn's Poisson standard error. The windows of a round share its
// schedule (a round's runs, a duet's twins), so the count is each of
// h.rounds independent draws counted windows/rounds times: its variance
// is that multiple of the asked count, not the count itself.
func (h held) se() float64 {
	share := float64(h.windows) / float64(max(1, h.rounds))
	return math.Sqrt(share*h.asked) / h.asked
}

func run(ctx context.Context, c config) error {
	logf("building obsbench")
	tmp, exe, err := sidebyside.BuildObsbench(ctx, "rate-held")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if err := os.MkdirAll(c.dir, 0o755); err != nil {
		return err
	}
	var all []held
	for _, eng := range c.engines {
		for _, setup := range c.setups {
			h, err := one(ctx, c, exe, tmp, eng, setup)
			if err != nil {
				return err
			}
			all = append(all, h)
		}
	}
	return sidebyside.Publish(filepath.Join(c.dir, "RESULT.md"), report(c, all))
}

// one runs eng's setup and sums its windows.
func one(ctx context.Context, c config, exe, tmp, eng, setup string) (held, error) {
	h := held{engine: eng, setup: setup, rounds: c.rounds}
	out := filepath.Join(tmp, eng+"-"+setup)
	h.args = []string{"run", "--engine", eng, "--rate", fmt.Sprint(c.rate), "--observers", observers[eng],
		"--rounds", fmt.Sprint(c.rounds), "--duration", c.duration.String(), "--count=false", "--seed", fmt.Sprint(c.seed)}
	switch setup {
	case setupLocal:
		h.args = append(h.args, "--method", "rounds")
	case setupWorkers:
		h.args = append(h.args, "--method", "rounds", "--workers", "2")
	case setupDuet:
		h.args = append(h.args, "--method", "duet")
	default:
		return h, fmt.Errorf("setup %q: want %s, %s or %s", setup, setupLocal, setupWorkers, setupDuet)
	}
	logf("%s, %s: obsbench %s", eng, setup, strings.Join(h.args, " "))
	t0 := time.Now()
	text, err := sidebyside.RunObsbench(ctx, exe, append(h.args, "--out", out)...)
	if err != nil {
		return h, fmt.Errorf("%s %s: %w", eng, setup, err)
	}
	h.elapsed = time.Since(t0)
	if err := os.WriteFile(filepath.Join(c.dir, "output-"+eng+"-"+setup+".txt"), []byte(text), 0o644); err != nil {
		return h, err
	}
	runs, err := result.ReadRuns(filepath.Join(out, "results.jsonl"))
	if err != nil {
		return h, err
	}
	for _, r := range runs {
		if r.Error != "" {
			return h, fmt.Errorf("%s %s: run %d: %s", eng, setup, r.Seq, r.Error)
		}
		h.add(r.Driver)
		if r.Duet != nil {
			h.add(r.Duet.Off)
		}
	}
	if h.windows == 0 {
		return h, fmt.Errorf("%s %s: no window at a rate in %s", eng, setup, out)
	}
	return h, nil
}

// add sums one window: its completed units against the rate asked over
// its seconds (Achieved is Completed per second of the window).
func (h *held) add(d result.DriverResult) {
	q := d.Rate
	if q == nil || q.Achieved <= 0 {
		return
	}
	h.windows++
	h.completed += q.Completed
	h.scheduled += q.Scheduled
	h.started += q.Started
	h.asked += q.Asked * float64(q.Completed) / q.Achieved
	h.lagP99 = max(h.lagP99, q.Lag.P99)
	if q.Saturated() {
		h.saturated++
	}
}

func report(c config, all []held) string {
	r := sidebyside.NewReport("obsbench --rate: the rate held", c.command)
	r.Line("- machine: %s", sidebyside.Machine())
	r.Line("- each setup: one `obsbench run` at %g units/s (Poisson), the baseline and one cheap observer, %d rounds (a duet: phases an arm) of %v, seed %d", c.rate, c.rounds, c.duration, c.seed)
	r.Line("- local: `--method rounds`, the sessions in obsbench's process; workers: `--method rounds --workers 2`; duet: `--method duet`, each twin's load in a worker of its own, both twins counted")
	r.Line("")
	r.Line("held: the units completed in every window over the rate asked times each window's seconds. It is the product of two parts: " +
		"drawn, the arrivals the Poisson schedule made in the windows over the rate asked (SE: its standard error, each round's schedule shared by its windows), " +
		"and kept, the share of those arrivals a session took up (the rest skipped or left waiting at the close). Lag p99: the largest window's.")
	r.Line("")
	r.Line("| engine | setup | windows | completed | scheduled | asked | held | drawn | SE | kept | saturated windows | lag p99 ms | time |")
	r.Line("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	held, kept, drawn := true, true, true
	for _, h := range all {
		r.Line("| %s | %s | %d | %d | %d | %.0f | %.4f | %.4f | %.4f | %.4f | %d | %.3f | %v |", h.engine, h.setup, h.windows, h.completed, h.scheduled, h.asked,
			h.ratio(), h.drawn(), h.se(), h.kept(), h.saturated, h.lagP99, h.elapsed.Round(time.Second))
		held = held && math.Abs(h.ratio()-1) <= 0.01
		kept = kept && h.kept() >= 0.99
		drawn = drawn && math.Abs(h.drawn()-1) <= 2.58*h.se()
	}
	r.Line("")
	r.Line("Commands (each with `--out DIR`; its text output is output-ENGINE-SETUP.txt beside this file):")
	r.Line("")
	for _, h := range all {
		r.Line("- %s, %s: `obsbench %s`", h.engine, h.setup, strings.Join(h.args, " "))
	}
	r.Line("")
	r.Line("**Goal**: every setup's windows within 1%% of the rate asked: **%s**", sidebyside.Verdict(held))
	r.Line("")
	r.Line("- the sessions kept at least 99%% of the schedule's arrivals in every setup: **%s**", sidebyside.Verdict(kept))
	r.Line("- every setup's schedule drew the rate asked within its 99%% Poisson interval (2.58 SE): **%s**", sidebyside.Verdict(drawn))
	return r.String()
}
