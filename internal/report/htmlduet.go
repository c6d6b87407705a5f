package report

import (
	"sort"

	"github.com/obsbench/obsbench/internal/result"
)

// A duet's phases last seconds, too few for a line per run: its page
// shows the experiment's timeline (both twins, each phase shaded by the
// twin the observer was in) and each observer's phases as dots around
// its estimate. Both are read from the runs as recorded, one run a phase.

// phaseDot is one phase of a paired condition, in the overhead's form.
type phaseDot struct {
	Pct float64 `json:"pct"`
	// On is the twin (or split's group) the observer was in: the twins'
	// own difference, which the estimate takes out, shows as two clouds.
	On    string `json:"on"`
	Seq   int    `json:"seq"`
	Round int    `json:"round"`
}

// phaseDots are a condition's phases, each as the overhead one phase
// alone would give on the basis the condition's overhead was read from:
// 1 - T/T(other side) from throughput, or 1 - C(other side)/C from
// server CPU per statement (what the same CPU would complete).
func phaseDots(c result.ConditionSummary, runs []result.Run) []phaseDot {
	cpu := c.Overhead != nil && c.Overhead.Basis == result.BasisServerCPU
	var out []phaseDot
	for _, r := range runs {
		d := r.Duet
		if r.Condition != c.Name || r.Error != "" || d == nil {
			continue
		}
		on, off := r.Driver.Throughput, d.Off.Throughput
		if cpu {
			// The ratio is inverted: more CPU per statement is fewer
			// statements for the same CPU.
			off, on = serverUSPerStmt(r)
		}
		if on <= 0 || off <= 0 {
			continue
		}
		out = append(out, phaseDot{Pct: 100 * (1 - on/off), On: d.On, Seq: r.Seq, Round: r.Round})
	}
	return out
}

// serverUSPerStmt is each side's server CPU per statement of a paired
// run: the twins' own accounting where it was read, else the CPU the run
// sampled of each side's server (0 when neither was read; a split's one
// server is neither group's).
func serverUSPerStmt(r result.Run) (on, off float64) {
	d := r.Duet
	if d.OnServerUS > 0 && d.OffServerUS > 0 {
		return d.OnServerUS, d.OffServerUS
	}
	if r.Method == result.MethodSplit {
		return 0, 0
	}
	per := func(u result.Usage, dr result.DriverResult) float64 {
		if u.Server == nil || dr.Measured == 0 {
			return 0
		}
		return 1e6 * u.Server.Seconds / float64(dr.Measured)
	}
	return per(r.Usage, r.Driver), per(d.OffUsage, d.Off)
}

// timeline is a paired experiment's phases in the order they ran, each
// with both sides' statements (and server CPU, where sampled) second by
// second, on one clock: seconds from the first phase's measured window.
type timeline struct {
	// Sides names what the two sides are: "twin" (a duet's servers) or
	// "group" (a split's sessions on one server).
	Sides  string          `json:"sides"`
	Phases []timelinePhase `json:"phases"`
	// CPU says every phase has both sides' server CPU per second.
	CPU bool `json:"cpu"`
}

type timelinePhase struct {
	Start     float64 `json:"start"`
	Condition string  `json:"condition"`
	// On is the side the observer was in; in the A/A arm the side
	// marked on, which had none (AA).
	On    string `json:"on"`
	AA    bool   `json:"aa"`
	Seq   int    `json:"seq"`
	Round int    `json:"round"`
	// A and B are each side's statements per second; ACPU and BCPU its
	// server's CPU in each second, in CPUs.
	A    []int64   `json:"a"`
	B    []int64   `json:"b"`
	ACPU []float64 `json:"a_cpu,omitempty"`
	BCPU []float64 `json:"b_cpu,omitempty"`
}

// timelineOf is the timeline of runs' paired phases; nil when none was
// paired or none recorded when it started.
func timelineOf(s result.Summary, runs []result.Run) *timeline {
	var paired []result.Run
	for _, r := range runs {
		if r.Duet != nil && r.Error == "" && !r.Started.IsZero() && len(r.Driver.PerSecond) > 0 {
			paired = append(paired, r)
		}
	}
	if len(paired) == 0 {
		return nil
	}
	sort.SliceStable(paired, func(i, j int) bool { return paired[i].Started.Before(paired[j].Started) })
	first := paired[0].Started
	tl := &timeline{Sides: "twin", CPU: true}
	for _, r := range paired {
		if r.Method == result.MethodSplit {
			tl.Sides = "group"
		}
		on, off := r.Driver, r.Duet.Off
		onU, offU := r.Usage.PerSecond, r.Duet.OffUsage.PerSecond
		p := timelinePhase{Start: r.Started.Sub(first).Seconds() + s.Warmup, Condition: r.Condition, On: r.Duet.On,
			AA: result.IsAA(r.Condition), Seq: r.Seq, Round: r.Round}
		p.A, p.B = totals(on.PerSecond), totals(off.PerSecond)
		p.ACPU, p.BCPU = serverPerSecond(onU, len(p.A)), serverPerSecond(offU, len(p.B))
		if r.Duet.On == "b" {
			p.A, p.B, p.ACPU, p.BCPU = p.B, p.A, p.BCPU, p.ACPU
		}
		tl.CPU = tl.CPU && p.ACPU != nil && p.BCPU != nil
		tl.Phases = append(tl.Phases, p)
	}
	if !tl.CPU {
		for i := range tl.Phases {
			tl.Phases[i].ACPU, tl.Phases[i].BCPU = nil, nil
		}
	}
	return tl
}

// serverPerSecond is a side's server CPU in each of its n seconds; nil
// when not sampled. A last, shorter second of the sampler is left out:
// the window's seconds are whole.
func serverPerSecond(u []result.CPUSecond, n int) []float64 {
	if len(u) < n || n == 0 {
		return nil
	}
	out := make([]float64, n)
	for i := range out {
		out[i] = u[i].Server
	}
	return out
}
