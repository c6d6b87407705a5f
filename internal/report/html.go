package report

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/obsbench/obsbench/internal/result"
)

// The chart library is uPlot (npm package uplot 1.6.32, MIT, license in
// assets/uPlot.LICENSE), embedded so that a report opens offline.
var (
	//go:embed assets/uPlot.iife.min.js
	uplotJS string
	//go:embed assets/uPlot.min.css
	uplotCSS string
	//go:embed assets/report.js
	reportJS string
	//go:embed assets/report.html.tmpl
	htmlTemplate string
)

var pageTemplate = template.Must(template.New("report").Funcs(template.FuncMap{"ci": ciCell}).Parse(htmlTemplate))

// HTML writes a self-contained report of an experiment: its summary and
// the runs of results.jsonl, with the chart library and the data inlined.
// It shows what the experiment's method measured and nothing empty: a
// duet's timeline and phases, not per-second lines of its 2-s phases; no
// section for what was not sampled.
func HTML(w io.Writer, s result.Summary, runs []result.Run) error {
	// The band no overhead can be told from: the round-based noise
	// floor, or for alternation alone the smallest detectable effect.
	floor := 0.0
	switch {
	case s.NoiseFloorPct != nil:
		floor = *s.NoiseFloorPct
	case s.MDEPct != nil:
		floor = *s.MDEPct
	}
	page := htmlPage{Summary: s, NoiseFloor: floor, Methods: methodNames(s), Table: conditionsTable(s),
		UPlotJS: template.JS(uplotJS), UPlotCSS: template.CSS(uplotCSS), ReportJS: template.JS(reportJS)}
	if s.Environment != nil {
		page.envView = envView{Environment: *s.Environment}
	}
	chart := chartData{NoiseFloorPct: floor, Timeline: timelineOf(s, runs)}
	for _, c := range s.Conditions {
		if o := c.Overhead; o.Measured() {
			chart.Overheads = append(chart.Overheads, overheadBar{Name: c.Name, Pct: o.Pct, CILow: o.CILow, CIHigh: o.CIHigh,
				Significant: o.Significant, Phases: phaseDots(c, runs)})
		}
		chart.Latency = append(chart.Latency, latencyOf(c, runs))
		if c.Waits != nil {
			wr := waitRow{Name: c.Name}
			for _, sh := range c.Waits.Top[:min(shownWaits, len(c.Waits.Top))] {
				t := fmt.Sprintf("%s %.1f%%", sh.Wait, sh.Pct)
				if sh.BaselinePct != nil {
					t += fmt.Sprintf(" (%.1f)", *sh.BaselinePct)
				}
				wr.Top = append(wr.Top, waitCell{Text: t, Signature: sh.Signature})
			}
			page.Waits = append(page.Waits, wr)
		}
	}
	sort.SliceStable(chart.Overheads, func(i, j int) bool { return chart.Overheads[i].Pct > chart.Overheads[j].Pct })
	for _, o := range chart.Overheads {
		page.PhaseDots = page.PhaseDots || len(o.Phases) > 0
	}
	page.Overheads = len(chart.Overheads) > 0
	for _, l := range chart.Latency {
		page.Latency = page.Latency || l.P50 > 0 || l.P99 > 0
	}
	page.Timeline = chart.Timeline
	chart.Series = seriesOf(s, runs)
	page.Series = chart.Series
	page.Counters = nonZeroCounters(s)
	if workersAsked(s) {
		for _, c := range s.Conditions {
			for _, w := range c.Workers {
				page.Workers = append(page.Workers, workerRow{Condition: c.Name, WorkerSummary: w})
			}
		}
	}
	page.Statements = statementMatrix(s)
	page.Rate = rateTable(s)
	b, err := json.Marshal(chart)
	if err != nil {
		return err
	}
	page.Data = template.JS(b)
	return pageTemplate.Execute(w, page)
}

type htmlPage struct {
	Summary    result.Summary
	NoiseFloor float64
	// Methods are the methods' short names, for the heading.
	Methods string
	Table   conditionsView
	// Overheads and Latency say there is something to chart; PhaseDots
	// that the overhead chart has a paired condition's phases.
	Overheads, Latency, PhaseDots bool
	Timeline                      *timeline
	Series                        []conditionSeries
	Waits                         []waitRow
	Counters                      counterView
	Workers                       []workerRow
	Statements                    counterView
	Rate                          rateView
	Data                          template.JS
	UPlotJS                       template.JS
	UPlotCSS                      template.CSS
	ReportJS                      template.JS
	envView
}

// chartData is what report.js draws.
type chartData struct {
	Overheads     []overheadBar     `json:"overheads"`
	Latency       []latencyBar      `json:"latency"`
	Series        []conditionSeries `json:"series"`
	Timeline      *timeline         `json:"timeline,omitempty"`
	NoiseFloorPct float64           `json:"noise_floor_pct"`
}

type overheadBar struct {
	Name        string  `json:"name"`
	Pct         float64 `json:"pct"`
	CILow       float64 `json:"ci_low"`
	CIHigh      float64 `json:"ci_high"`
	Significant bool    `json:"significant"`
	// Phases are a paired condition's phases, each alone.
	Phases []phaseDot `json:"phases,omitempty"`
}

type latencyBar struct {
	Name string  `json:"name"`
	P50  float64 `json:"p50"`
	P90  float64 `json:"p90"`
	P99  float64 `json:"p99"`
	P999 float64 `json:"p999"`
}

// latencyOf is a condition's latency percentiles: p50 and p99 from the
// summary, p90 and p99.9 the median over its runs.
func latencyOf(c result.ConditionSummary, runs []result.Run) latencyBar {
	var p90, p999 []float64
	for _, r := range runs {
		if r.Condition == c.Name && r.Error == "" {
			p90, p999 = append(p90, r.Driver.Latency.P90), append(p999, r.Driver.Latency.P999)
		}
	}
	return latencyBar{Name: c.Name, P50: c.LatencyMS.P50, P90: median(p90), P99: c.LatencyMS.P99, P999: median(p999)}
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	v = slices.Clone(v)
	slices.Sort(v)
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}

// conditionSeries are the per-second totals of every run of a condition.
type conditionSeries struct {
	Name string      `json:"name"`
	Runs []runSeries `json:"runs"`
}

type runSeries struct {
	Label     string  `json:"label"`
	PerSecond []int64 `json:"per_second"`
	// OnPhases are an alternation run's on phases, [start, end) seconds:
	// shaded in its chart.
	OnPhases [][2]int `json:"on_phases,omitempty"`
}

// minSeriesSeconds is the shortest run drawn second by second: a run of
// a few seconds (a duet's phase, a short round) is a line of two or three
// points, which says less than its one figure in the table.
const minSeriesSeconds = 10

// seriesOf sums each run's sessions second by second, grouped by
// condition in the summary's order; only runs of minSeriesSeconds or more
// that are not a paired phase (a duet's, whose timeline is drawn whole),
// and only conditions with such a run.
func seriesOf(s result.Summary, runs []result.Run) []conditionSeries {
	all := make([]conditionSeries, 0, len(s.Conditions))
	index := map[string]int{}
	for _, c := range s.Conditions {
		index[c.Name] = len(all)
		all = append(all, conditionSeries{Name: c.Name})
	}
	for _, r := range runs {
		i, ok := index[r.Condition]
		if !ok || r.Duet != nil {
			continue
		}
		total := totals(r.Driver.PerSecond)
		if len(total) < minSeriesSeconds {
			continue
		}
		label := fmt.Sprintf("run %d (round %d)", r.Seq, r.Round)
		if r.Error != "" {
			label += " failed"
		}
		rs := runSeries{Label: label, PerSecond: total}
		for _, ph := range r.Phases {
			if ph.On {
				rs.OnPhases = append(rs.OnPhases, [2]int{ph.Start, ph.End})
			}
		}
		all[i].Runs = append(all[i].Runs, rs)
	}
	out := []conditionSeries{} // [] in the data, not null
	for _, c := range all {
		if len(c.Runs) > 0 {
			out = append(out, c)
		}
	}
	return out
}

type eventView struct {
	Name               string
	Recorded, Executed int64
	Difference         string
	Lost               bool
	EngineLost         bool
	EngineLostText     string
}

func eventRow(name string, ev *result.Events) eventView {
	v := eventView{Name: name, Recorded: ev.Recorded, Executed: ev.Executed, EngineLostText: "-"}
	switch d := ev.Recorded - ev.Executed; {
	case ev.Error != "":
		v.Difference = "not collected: " + ev.Error
	case ev.Volume:
		v.Difference = "not per statement: the observer's volume"
	case ev.SampleRate > 0:
		lo, hi, outside := ev.OutsideSample()
		v.Difference = fmt.Sprintf("sampled %g: within %d-%d", ev.SampleRate, lo, hi)
		if outside {
			v.Difference, v.Lost = fmt.Sprintf("sampled %g: OUTSIDE %d-%d", ev.SampleRate, lo, hi), true
		}
	case d < 0:
		v.Difference, v.Lost = fmt.Sprintf("LOST %d", -d), true
	case d > 0:
		v.Difference = fmt.Sprintf("EXTRA %d", d)
	default:
		v.Difference = "none"
	}
	var engine []string
	if ev.EngineLost != nil {
		engine = append(engine, fmt.Sprint(*ev.EngineLost))
		v.EngineLost = *ev.EngineLost > 0
	}
	if ev.EngineLostBuffers != nil && *ev.EngineLostBuffers > 0 {
		engine = append(engine, fmt.Sprintf("%d buffers", *ev.EngineLostBuffers))
		v.EngineLost = true
	}
	if ev.EngineBlocked != nil && *ev.EngineBlocked > 0 {
		engine = append(engine, fmt.Sprintf("blocked %d (unit undocumented)", *ev.EngineBlocked))
	}
	if len(engine) > 0 {
		v.EngineLostText = strings.Join(engine, ", ")
	}
	return v
}

type waitRow struct {
	Name string
	Top  []waitCell
}

type waitCell struct {
	Text      string
	Signature bool
}

// workerRow is one worker's line of a condition (--workers).
type workerRow struct {
	Condition string
	result.WorkerSummary
}

type counterView struct {
	Names []string
	Rows  []counterRow
}

type counterRow struct {
	Name   string
	Full   string // the name whole, where Name shortens it
	Values []string
}

// envView formats the environment for the page.
type envView struct {
	result.Environment
}

func (e envView) CommandLine() string { return strings.Join(e.Command, " ") }

func (e envView) MemoryText() string {
	return fmt.Sprintf("%.1f GiB", float64(e.Machine.MemoryBytes)/(1<<30))
}

type settingRow struct{ Name, Value string }

func (e envView) SettingRows() []settingRow {
	var out []settingRow
	for _, k := range slices.Sorted(maps.Keys(e.Settings)) {
		out = append(out, settingRow{k, e.Settings[k]})
	}
	return out
}

// WriteHTMLFile writes dir/report.html, atomically: a reader never sees
// half.
func WriteHTMLFile(dir string, sum result.Summary, runs []result.Run) error {
	return writeHTMLFile(dir, func(w io.Writer) error { return HTML(w, sum, runs) })
}

// writeHTMLFile writes dir/report.html with page, atomically.
func writeHTMLFile(dir string, page func(io.Writer) error) error {
	tmp, err := os.CreateTemp(dir, ".report-*.html")
	if err != nil {
		return fmt.Errorf("write report.html: %w", err)
	}
	defer os.Remove(tmp.Name())
	if err := page(tmp); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), filepath.Join(dir, "report.html"))
}
