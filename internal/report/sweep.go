package report

import (
	"fmt"
	"io"
	"text/tabwriter"

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
// interval. perUnit, when > 1, adds columns per unit of that many
// statements (study 5's thousand-query): ms per unit and units per minute.
func Sweep(w io.Writer, points []SweepPoint, perUnit int) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := "sessions\tcondition\tmeasures, over\tstmts/s\tms/stmt\t"
	if perUnit > 1 {
		head += fmt.Sprintf("ms per %s\t%s per min\t", unitName(perUnit), unitName(perUnit))
	}
	fmt.Fprintln(tw, head+"overhead % [CI]\tverdict\t")
	for _, p := range points {
		for _, c := range p.Summary.Conditions {
			t := c.Throughput.Median
			row := fmt.Sprintf("%d\t%s\t%s\t%s\t", p.Sessions, c.Name, measuresCell(c), thousands(t))
			switch msPer := float64(p.Sessions) / t * 1000; {
			case t <= 0 && perUnit > 1:
				row += "-\t-\t-\t"
			case t <= 0:
				row += "-\t"
			case perUnit > 1:
				row += fmt.Sprintf("%.3f\t%.1f\t%.1f\t", msPer, msPer*float64(perUnit), t*60/float64(perUnit))
			default:
				row += fmt.Sprintf("%.3f\t", msPer)
			}
			verdict := "-"
			if o := c.Overhead; o != nil {
				verdict = o.Verdict
			}
			fmt.Fprintf(tw, "%s%s\t%s\t\n", row, overheadCell(c.Overhead), verdict)
		}
	}
	return tw.Flush()
}

func unitName(n int) string {
	if n == 1000 {
		return "thousand-query"
	}
	return fmt.Sprintf("%d-stmts", n)
}
