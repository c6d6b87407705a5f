package report

import (
	"fmt"
	"io"

	"github.com/obsbench/obsbench/internal/result"
)

// SweepPoint is one experiment of a sweep: of session counts, or of
// loads (at a fixed rate, --load 25,50,75).
type SweepPoint struct {
	Sessions int     `json:"sessions,omitempty"`
	LoadPct  float64 `json:"load_pct,omitempty"`
	// DoseSetting and DoseValue are a dose sweep's setting and this
	// point's value of it.
	DoseSetting string         `json:"dose_setting,omitempty"`
	DoseValue   string         `json:"dose_value,omitempty"`
	Dir         string         `json:"dir"`
	Summary     result.Summary `json:"-"`
}

// Label names the point in messages: "4 sessions", "load 50%",
// "auto_explain.sample_rate=0.1".
func (p SweepPoint) Label() string {
	if p.DoseSetting != "" {
		return p.DoseSetting + "=" + p.DoseValue
	}
	if p.LoadPct > 0 {
		return fmt.Sprintf("load %g%%", p.LoadPct)
	}
	return fmt.Sprintf("%d sessions", p.Sessions)
}

// Sweep writes a concurrency sweep: for each session count and condition,
// throughput, the mean time a session waits per statement (sessions /
// throughput, a closed loop's identity), and the overhead with its
// interval. perUnit, when > 1, reports per unit of that many statements
// (study 5's thousand-query) in place of per statement: ms per unit and
// units per minute.
func Sweep(w io.Writer, points []SweepPoint, perUnit int) error {
	all := sweepSummary(points)
	over := "-" // no row says what it measures
	if hasMeasures(all) {
		over = sharedMeasures(all)
	}
	t := columns{head: []string{"sessions", "condition"}}
	if over == "" {
		t.head = append(t.head, "measures, over")
	}
	t.head = append(t.head, "stmts/s")
	if perUnit > 1 {
		t.head = append(t.head, "ms/unit", "units/min")
	} else {
		t.head = append(t.head, "ms/stmt")
	}
	t.head = append(t.head, "overhead % [CI]", "verdict")
	t.left = make([]bool, len(t.head))
	t.left[1], t.left[2], t.left[len(t.head)-1] = true, over == "", true
	for _, p := range points {
		for _, c := range p.Summary.Conditions {
			row := []string{fmt.Sprint(p.Sessions), c.Name}
			if over == "" {
				row = append(row, measuresCell(c))
			}
			tput := c.Throughput.Median
			row = append(row, thousands(tput))
			switch msPer := float64(p.Sessions) / tput * 1000; {
			case tput <= 0 && perUnit > 1:
				row = append(row, "-", "-")
			case tput <= 0:
				row = append(row, "-")
			case perUnit > 1:
				row = append(row, fmt.Sprintf("%.1f", msPer*float64(perUnit)), fmt.Sprintf("%.1f", tput*60/float64(perUnit)))
			default:
				row = append(row, fmt.Sprintf("%.3f", msPer))
			}
			t.add(append(row, overheadCell(c.Overhead), shortVerdict(verdictCell(c)))...)
		}
	}
	if err := t.write(w); err != nil {
		return err
	}
	if perUnit > 1 {
		notef(w, "unit: a %s, %d statements; ms/unit: the time a session waits for one, sessions / stmts/s × %d", unitName(perUnit), perUnit, perUnit)
	}
	if over != "" && over != "-" {
		notef(w, "%s", measuresSentence(all, ""))
	}
	notef(w, "%s", verdictLegend)
	return nil
}

// sweepSummary holds every condition of a sweep's points, to say what
// they share.
func sweepSummary(points []SweepPoint) result.Summary {
	var all result.Summary
	for _, p := range points {
		all.Conditions = append(all.Conditions, p.Summary.Conditions...)
	}
	return all
}

func unitName(n int) string {
	if n == 1000 {
		return "thousand-query"
	}
	return fmt.Sprintf("%d-stmts", n)
}
