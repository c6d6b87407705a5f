package report

import (
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"math"
	"strings"

	"github.com/obsbench/obsbench/internal/result"
)

//go:embed assets/dose.html.tmpl
var doseTemplateText string

var doseTemplate = template.Must(template.New("dose").Parse(doseTemplateText))

// dosePage is a dose sweep's report.html: the curve of overhead against
// the dose as an inline SVG (no script), and the sweep's table.
type dosePage struct {
	Observer, Setting, Values, Engine, Server, Workload, Method, Missing, Limit string
	HasLimit                                                                    bool
	Dirs                                                                        []string
	Rows                                                                        [][]string
	Chart                                                                       doseChart
}

// doseChart is the SVG's geometry: the plot area, its y ticks, a mark per
// value and condition, and the labels of the values.
type doseChart struct {
	W, H, Left, Right, TickX, Zero, LimitY, LabelY, MidX, MidY float64
	Ticks                                                      []struct {
		Y     float64
		Label string
	}
	Marks []struct {
		X, Y, Lo, Hi float64
		Color        string
	}
	Labels []struct {
		X    float64
		Text string
	}
}

// DoseSweepHTML writes a dose sweep's page.
func DoseSweepHTML(w io.Writer, rec SweepRecord) error {
	page := dosePage{Observer: rec.Observer, Setting: rec.Dose.Setting, Values: strings.Join(rec.Dose.Values, ", "),
		Workload: rec.Workload, Missing: strings.Join(missingPoints(rec), ", "), Rows: doseRows(rec.Points)}
	for _, p := range rec.Points {
		page.Dirs = append(page.Dirs, p.Dir)
		if page.Engine == "" {
			page.Engine, page.Server, page.Method = p.Summary.Engine, p.Summary.Server, p.Summary.Method
		}
	}
	var limit *float64
	if rec.MaxOverhead != nil {
		var b strings.Builder
		doseLimitLine(&b, rec)
		page.Limit, page.HasLimit, limit = strings.TrimSpace(b.String()), true, rec.MaxOverhead
	}
	page.Chart = doseChartOf(rec.Points, limit)
	return doseTemplate.Execute(w, page)
}

// doseChartOf lays out the marks: a column per value, the observer's
// mark and its A/A arm's beside it; the y axis spans every interval, 0
// and the limit.
func doseChartOf(points []SweepPoint, limit *float64) doseChart {
	c := doseChart{W: 760, H: 340, Left: 60, Right: 740, TickX: 54, LabelY: 300}
	top, bottom := 50.0, 280.0
	lo, hi := 0.0, 1.0
	if limit != nil {
		hi = math.Max(hi, *limit)
	}
	for _, p := range points {
		for _, cs := range p.Summary.Conditions {
			if o := cs.Overhead; o != nil && o.Measured() {
				lo, hi = math.Min(lo, o.CILow), math.Max(hi, o.CIHigh)
			}
		}
	}
	step := niceStep((hi - lo) / 5)
	lo, hi = math.Floor(lo/step)*step, math.Ceil(hi/step)*step
	y := func(v float64) float64 { return bottom - (v-lo)/(hi-lo)*(bottom-top) }
	for v := lo; v <= hi+step/2; v += step {
		c.Ticks = append(c.Ticks, struct {
			Y     float64
			Label string
		}{y(v), fmt.Sprintf("%g", math.Round(v*1000)/1000)})
	}
	c.Zero, c.MidX, c.MidY = y(0), (c.Left+c.Right)/2, (top+bottom)/2
	if limit != nil {
		c.LimitY = y(*limit)
	}
	col := (c.Right - c.Left) / float64(max(1, len(points)))
	for i, p := range points {
		x := c.Left + col*(float64(i)+0.5)
		c.Labels = append(c.Labels, struct {
			X    float64
			Text string
		}{x, p.DoseValue})
		for _, cs := range p.Summary.Conditions {
			o := cs.Overhead
			if o == nil || !o.Measured() {
				continue
			}
			mx, color := x-6, "#1f5fa8"
			if result.IsAA(cs.Name) {
				mx, color = x+10, "#aaa"
			}
			c.Marks = append(c.Marks, struct {
				X, Y, Lo, Hi float64
				Color        string
			}{mx, y(o.Pct), y(o.CILow), y(o.CIHigh), color})
		}
	}
	return c
}

// niceStep is the round step (1, 2 or 5 times a power of ten) at least d.
func niceStep(d float64) float64 {
	if d <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(d)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= d {
			return m * p
		}
	}
	return 10 * p
}

// WriteDoseSweepHTMLFile writes a dose sweep's report.html in dir.
func WriteDoseSweepHTMLFile(dir string, rec SweepRecord) error {
	return writeHTMLFile(dir, func(w io.Writer) error { return DoseSweepHTML(w, rec) })
}
