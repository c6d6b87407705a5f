package report_test

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/obsbench/obsbench/internal/report"
	"github.com/obsbench/obsbench/internal/result"
)

// The series has a row per measured second of each run, its statements
// those the run counted that second, and the side of an alternation's
// second that of its phase; each second's latency is the run's for it.
func TestSeries(t *testing.T) {
	s, runs := recorded(t)
	// The recorded runs predate per-second latency: give the first that
	// succeeded its seconds' (a second with no statement has none).
	k := slices.IndexFunc(runs, func(r result.Run) bool { return r.Error == "" })
	first := &runs[k].Driver
	for i := range first.PerSecond[0] {
		first.LatencyPerSecond = append(first.LatencyPerSecond, result.SecondLatency{Count: int64(i), P50: 1 + float64(i), P90: 2, P99: 3, Max: 4})
	}
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
			lat := strings.Join(row[11:15], ",")
			switch {
			case r.Seq != runs[k].Seq || i == 0:
				if lat != ",,," {
					t.Errorf("run %d, second %d: latency %q; want none", r.Seq, i, lat)
				}
			case lat != strconv.Itoa(1+i)+".000,2.000,3.000,4.000":
				t.Errorf("run %d, second %d: latency %q; want its p50, p90, p99 and max", r.Seq, i, lat)
			}
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

// At a rate, each second also has its units and their latency from the
// scheduled start; a closed loop's seconds leave those columns empty.
func TestSeriesAtRate(t *testing.T) {
	s, runs := recorded(t)
	k := slices.IndexFunc(runs, func(r result.Run) bool { return r.Error == "" })
	seconds := len(runs[k].Driver.PerSecond[0])
	rate := &result.RateResult{Asked: 100}
	for i := range seconds {
		rate.LatencyPerSecond = append(rate.LatencyPerSecond, result.SecondLatency{Count: int64(10 + i), P50: 5, P99: 50 + float64(i), Max: 90})
	}
	runs[k].Driver.Rate = rate
	var b bytes.Buffer
	if err := report.Series(&b, s, runs); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if h := strings.Join(rows[0][15:], ","); h != "units,sched_p50_ms,sched_p99_ms,sched_max_ms" {
		t.Fatalf("header ends %q", h)
	}
	seen := 0
	for _, row := range rows[1:] {
		got := strings.Join(row[15:], ",")
		if row[1] != strconv.Itoa(runs[k].Seq) {
			if got != ",,," {
				t.Errorf("run %s at no rate: %q; want empty", row[1], got)
			}
			continue
		}
		i, _ := strconv.Atoi(row[7])
		if want := fmt.Sprintf("%d,5.000,%d.000,90.000", 10+i, 50+i); got != want {
			t.Errorf("second %d: %q; want %q", i, got, want)
		}
		seen++
	}
	if seen != seconds {
		t.Errorf("%d rows of the run at a rate; want %d", seen, seconds)
	}
}
