package report

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"strings"

	"github.com/obsbench/obsbench/internal/result"
	"github.com/obsbench/obsbench/internal/spec"
)

var (
	//go:embed assets/loadsweep.html.tmpl
	loadSweepTemplateText string
	//go:embed assets/loadsweep.js
	loadSweepJS string
)

var loadSweepTemplate = template.Must(template.New("loadsweep").Parse(loadSweepTemplateText))

// loadCurve is one condition's latency against load, as loadsweep.js
// draws it: a value per load, null where the side could not keep the
// rate (or was not compared).
type loadCurve struct {
	Name       string     `json:"name"`
	Loads      []float64  `json:"loads"`
	P50With    []*float64 `json:"p50_with"`
	P50Without []*float64 `json:"p50_without"`
	P99With    []*float64 `json:"p99_with"`
	P99Without []*float64 `json:"p99_without"`
	// Saturated names the loads a side could not keep, for the page.
	Saturated []string `json:"-"`
}

type loadSweepPage struct {
	Engine, Server, Workload, Method, Loads, Missing string
	Dirs                                             []string
	Head                                             []string
	Rows                                             [][]string
	Curves                                           []loadCurve
	Data, UPlotJS, SweepJS                           template.JS
	UPlotCSS                                         template.CSS
}

// LoadSweepHTML writes a self-contained page of a load sweep: one chart
// of latency against load per condition, the side without the observer
// beside it, and the sweep's table.
func LoadSweepHTML(w io.Writer, rec SweepRecord) error {
	page := loadSweepPage{Workload: rec.Workload, Loads: spec.FormatLoads(rec.Loads), Missing: strings.Join(missingPoints(rec), ", "),
		Head: loadSweepHead, Rows: loadSweepRows(rec.Points), Curves: loadCurves(rec.Points),
		UPlotJS: template.JS(uplotJS), UPlotCSS: template.CSS(uplotCSS), SweepJS: template.JS(loadSweepJS)}
	for _, p := range rec.Points {
		page.Dirs = append(page.Dirs, p.Dir)
		if page.Engine == "" {
			page.Engine, page.Server = p.Summary.Engine, p.Summary.Server
			page.Method = p.Summary.Method
		}
	}
	b, err := json.Marshal(map[string]any{"curves": page.Curves})
	if err != nil {
		return err
	}
	page.Data = template.JS(b)
	return loadSweepTemplate.Execute(w, page)
}

// loadCurves are each condition's latency at each load of points.
func loadCurves(points []SweepPoint) []loadCurve {
	var out []loadCurve
	for _, name := range conditionNames(points) {
		c := loadCurve{Name: name}
		for _, p := range points {
			cs, ok := conditionOf(p.Summary, name)
			if !ok || cs.Rate == nil {
				continue
			}
			r := cs.Rate
			c.Loads = append(c.Loads, p.LoadPct)
			c.P50With = append(c.P50With, latencyAt(&r.Side, func(l *result.RateLatency) float64 { return l.P50 }))
			c.P99With = append(c.P99With, latencyAt(&r.Side, func(l *result.RateLatency) float64 { return l.P99 }))
			c.P50Without = append(c.P50Without, latencyAt(r.Reference, func(l *result.RateLatency) float64 { return l.P50 }))
			c.P99Without = append(c.P99Without, latencyAt(r.Reference, func(l *result.RateLatency) float64 { return l.P99 }))
			if r.Side.Latency == nil {
				c.Saturated = append(c.Saturated, fmt.Sprintf("with the observer at %g%%", p.LoadPct))
			}
			if r.Reference != nil && r.Reference.Latency == nil {
				c.Saturated = append(c.Saturated, fmt.Sprintf("without it at %g%%", p.LoadPct))
			}
		}
		if len(c.Loads) > 0 {
			out = append(out, c)
		}
	}
	return out
}

// latencyAt is one latency of a side, nil when the side was not compared
// or could not keep the rate.
func latencyAt(side *result.RateSide, of func(*result.RateLatency) float64) *float64 {
	if side == nil || side.Latency == nil {
		return nil
	}
	v := of(side.Latency)
	return &v
}

// WriteLoadSweepHTMLFile writes dir/report.html of a load sweep,
// atomically.
func WriteLoadSweepHTMLFile(dir string, rec SweepRecord) error {
	return writeHTMLFile(dir, func(w io.Writer) error { return LoadSweepHTML(w, rec) })
}
