package report_test

import (
	"bytes"
	"encoding/csv"
	"strconv"
	"testing"

	"github.com/obsbench/obsbench/internal/report"
)

// The series has a row per measured second of each run, its statements
// those the run counted that second, and the side of an alternation's
// second that of its phase.
func TestSeries(t *testing.T) {
	s, runs := recorded(t)
	var b bytes.Buffer
	if err := report.Series(&b, s, runs); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	bySeq := map[string][][]string{}
	for _, r := range rows[1:] {
		bySeq[r[1]] = append(bySeq[r[1]], r)
	}
	for _, r := range runs {
		if r.Error != "" {
			continue
		}
		got := bySeq[strconv.Itoa(r.Seq)]
		var want int64
		for _, sess := range r.Driver.PerSecond {
			for _, n := range sess {
				want += n
			}
		}
		var sum int64
		for i, row := range got {
			n, _ := strconv.ParseInt(row[8], 10, 64)
			sum += n
			if row[7] != strconv.Itoa(i) {
				t.Fatalf("run %d: row %d is second %s", r.Seq, i, row[7])
			}
			for _, p := range r.Phases {
				if i >= p.Start && i < p.End && (row[6] == "on") != p.On {
					t.Errorf("run %d, second %d: side %q; its phase is on=%v", r.Seq, i, row[6], p.On)
				}
			}
		}
		if sum != want {
			t.Errorf("run %d: %d statements over its rows; it counted %d", r.Seq, sum, want)
		}
	}
}
