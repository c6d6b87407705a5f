package report

import (
	"io"

	"github.com/obsbench/obsbench/internal/result"
)

// DoseSweep writes a dose sweep: for each value of the observer's setting
// and each condition, the overhead with its interval, its verdict and the
// events it recorded of the statements executed; the curve of cost
// against dose, in the order the values were given.
func DoseSweep(w io.Writer, points []SweepPoint) error {
	t := columns{head: []string{"value", "condition", "overhead % [CI]", "verdict", "events rec/exec"}, left: []bool{true, true, false, true}}
	for _, row := range doseRows(points) {
		row[3] = shortVerdict(row[3])
		t.add(row...)
	}
	if err := t.write(w); err != nil {
		return err
	}
	notef(w, "%s", verdictLegend)
	return nil
}

// doseRows are a dose sweep's rows, for the text table and the page: a
// row per value and compared condition.
func doseRows(points []SweepPoint) [][]string {
	var rows [][]string
	for _, p := range points {
		for _, c := range p.Summary.Conditions {
			if c.Overhead == nil {
				continue // the baseline: nothing to compare
			}
			rows = append(rows, []string{p.DoseValue, c.Name, overheadCell(c.Overhead), c.Overhead.Verdict, events(c.Events)})
		}
	}
	return rows
}

// DoseLimit is the largest value of a dose sweep up to which the
// observer's overhead stays under limit with 95% confidence (every
// interval's upper end below it, each value's and every smaller one's),
// the dose being given from the least to the most; ok is false where its
// first value does not.
func DoseLimit(points []SweepPoint, limit float64) (value string, ok bool) {
	for _, p := range points {
		c := doseCondition(p.Summary)
		if c == nil || !c.Overhead.Measured() || c.Overhead.CIHigh >= limit {
			break
		}
		value, ok = p.DoseValue, true
	}
	return value, ok
}

// doseCondition is the dosed observer's condition of a point: the one
// that is neither the baseline nor an A/A arm.
func doseCondition(s result.Summary) *result.ConditionSummary {
	for i, c := range s.Conditions {
		if c.Overhead != nil && !result.IsAA(c.Name) {
			return &s.Conditions[i]
		}
	}
	return nil
}
