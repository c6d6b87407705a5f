package report

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/obsbench/obsbench/internal/result"
	"github.com/obsbench/obsbench/internal/spec"
)

// SweepFile lists a sweep's experiments in its --out directory.
const SweepFile = "sweep.json"

// SweepRecord is sweep.json: the experiments of a sweep and the unit its
// table reports in.
type SweepRecord struct {
	Workload string    `json:"workload"`
	PerUnit  int       `json:"per_unit"`
	Sessions []int     `json:"sessions,omitempty"`
	Loads    []float64 `json:"loads,omitempty"`
	// Dose is a dose sweep's observer setting and values (--dose), and
	// Observer the observer; MaxOverhead the limit (--max-overhead) its
	// largest value is judged against, if one was given.
	Dose        *spec.Dose   `json:"dose,omitempty"`
	Observer    string       `json:"observer,omitempty"`
	MaxOverhead *float64     `json:"max_overhead,omitempty"`
	Points      []SweepPoint `json:"points"`
}

// Planned are the sweep's points, each with its directory, before any
// has run.
func (rec SweepRecord) Planned() []SweepPoint {
	var out []SweepPoint
	for _, n := range rec.Sessions {
		out = append(out, SweepPoint{Sessions: n, Dir: fmt.Sprintf("sessions-%d", n)})
	}
	for _, p := range rec.Loads {
		out = append(out, SweepPoint{LoadPct: p, Dir: "load-" + strconv.FormatFloat(p, 'g', -1, 64)})
	}
	if rec.Dose.Sweeps() {
		for _, v := range rec.Dose.Values {
			out = append(out, SweepPoint{DoseSetting: rec.Dose.Setting, DoseValue: v, Dir: "dose-" + v})
		}
	}
	return out
}

// PrintSweep prints a sweep's table (text) or record with its summaries
// (json).
func PrintSweep(w io.Writer, format spec.Format, dir string, rec SweepRecord) error {
	if format == spec.FormatJSON {
		type point struct {
			Sessions    int            `json:"sessions,omitempty"`
			LoadPct     float64        `json:"load_pct,omitempty"`
			DoseSetting string         `json:"dose_setting,omitempty"`
			DoseValue   string         `json:"dose_value,omitempty"`
			Dir         string         `json:"dir"`
			Summary     result.Summary `json:"summary"`
		}
		var out []point
		for _, p := range rec.Points {
			out = append(out, point(p))
		}
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		all := map[string]any{"workload": rec.Workload, "sessions": rec.Sessions, "loads": rec.Loads, "points": out}
		if rec.Dose != nil {
			all["dose"], all["observer"] = rec.Dose, rec.Observer
			if rec.MaxOverhead != nil {
				var largest any // null where no value stays within
				if v, ok := DoseLimit(rec.Points, *rec.MaxOverhead); ok {
					largest = v
				}
				all["max_overhead"], all["largest_within"] = *rec.MaxOverhead, largest
			}
		}
		return enc.Encode(all)
	}
	if len(rec.Points) == 0 {
		return nil
	}
	per := "session count"
	switch {
	case rec.Dose != nil:
		notef(w, "dose sweep: %s's %s = %s (one experiment each)\n\n", rec.Observer, rec.Dose.Setting, strings.Join(rec.Dose.Values, ", "))
		if err := DoseSweep(w, rec.Points); err != nil {
			return err
		}
		doseLimitLine(w, rec)
		per = "value"
	case len(rec.Loads) > 0:
		notef(w, "load sweep: %s, loads %s%% of the baseline's server CPU busy\n\n", rec.Workload, spec.FormatLoads(rec.Loads))
		if err := LoadSweep(w, rec.Points); err != nil {
			return err
		}
		per = "load"
	default:
		notef(w, "concurrency sweep: %s, sessions %s\n\n", rec.Workload, spec.FormatSessions(rec.Sessions))
		if err := Sweep(w, rec.Points, rec.PerUnit); err != nil {
			return err
		}
	}
	if missing := missingPoints(rec); len(missing) > 0 {
		notef(w, "not measured: %s (the experiment failed or was interrupted)", strings.Join(missing, ", "))
	}
	fmt.Fprintln(w)
	notef(w, "results: %s (one directory per %s; obsbench report %s)", dir, per, dir)
	return nil
}

// doseLimitLine says, for a dose sweep given --max-overhead, the largest
// value that stays under it with 95% confidence, or that none does.
func doseLimitLine(w io.Writer, rec SweepRecord) {
	if rec.MaxOverhead == nil {
		return
	}
	limit := *rec.MaxOverhead
	if v, ok := DoseLimit(rec.Points, limit); ok {
		notef(w, "\nlargest %s within --max-overhead %g%% with 95%% confidence (its interval and every smaller value's below %g): %s", rec.Dose.Setting, limit, limit, v)
		return
	}
	notef(w, "\nno value of %s stays within --max-overhead %g%% with 95%% confidence (the first value's interval reaches %g or more)", rec.Dose.Setting, limit, limit)
}

// missingPoints name the points of rec without a summary.
func missingPoints(rec SweepRecord) []string {
	var out []string
	for _, p := range rec.Planned() {
		if !slices.ContainsFunc(rec.Points, func(q SweepPoint) bool { return q.Dir == p.Dir }) {
			out = append(out, p.Label())
		}
	}
	return out
}

// WriteSweep writes a sweep's record in its directory and, for a sweep
// of loads, its report.html (latency against load).
func WriteSweep(dir string, rec SweepRecord) error {
	b, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, SweepFile), append(b, '\n'), 0o600); err != nil {
		return err
	}
	_, err = writeSweepHTML(dir, rec)
	return err
}

// writeSweepHTML writes the report.html of a sweep of loads or of a dose,
// and says whether it had one to write (a sweep of sessions has none).
func writeSweepHTML(dir string, rec SweepRecord) (bool, error) {
	switch {
	case len(rec.Loads) > 0:
		return true, WriteLoadSweepHTMLFile(dir, rec)
	case rec.Dose.Sweeps():
		return true, WriteDoseSweepHTMLFile(dir, rec)
	}
	return false, nil
}

// ReadSweep reads a sweep directory's record with its experiments'
// summaries; ok is false when dir is not a sweep.
func ReadSweep(dir string) (rec SweepRecord, ok bool, err error) {
	b, err := os.ReadFile(filepath.Join(dir, SweepFile))
	if errors.Is(err, os.ErrNotExist) {
		return rec, false, nil
	}
	if err != nil {
		return rec, true, err
	}
	if err := json.Unmarshal(b, &rec); err != nil {
		return rec, true, fmt.Errorf("%s: %w", filepath.Join(dir, SweepFile), err)
	}
	for i := range rec.Points {
		if rec.Points[i].Summary, err = result.ReadSummary(filepath.Join(dir, rec.Points[i].Dir, "summary.json")); err != nil {
			return rec, true, err
		}
	}
	slices.SortStableFunc(rec.Points, func(a, b SweepPoint) int {
		return cmp.Or(cmp.Compare(a.Sessions, b.Sessions), cmp.Compare(a.LoadPct, b.LoadPct))
	})
	return rec, true, nil
}
