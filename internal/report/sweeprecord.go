package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"

	"github.com/obsbench/obsbench/internal/result"
	"github.com/obsbench/obsbench/internal/spec"
)

// SweepFile lists a sweep's experiments in its --out directory.
const SweepFile = "sweep.json"

// SweepRecord is sweep.json: the experiments of a sweep and the unit its
// table reports in.
type SweepRecord struct {
	Workload string       `json:"workload"`
	PerUnit  int          `json:"per_unit"`
	Sessions []int        `json:"sessions"`
	Points   []SweepPoint `json:"points"`
}

// PrintSweep prints a sweep's table (text) or record with its summaries
// (json).
func PrintSweep(w io.Writer, format spec.Format, dir string, rec SweepRecord) error {
	if format == spec.FormatJSON {
		type point struct {
			Sessions int            `json:"sessions"`
			Dir      string         `json:"dir"`
			Summary  result.Summary `json:"summary"`
		}
		var out []point
		for _, p := range rec.Points {
			out = append(out, point(p))
		}
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(map[string]any{"workload": rec.Workload, "sessions": rec.Sessions, "points": out})
	}
	if len(rec.Points) == 0 {
		return nil
	}
	fmt.Fprintf(w, "concurrency sweep: %s, sessions %s\n\n", rec.Workload, spec.FormatSessions(rec.Sessions))
	if err := Sweep(w, rec.Points, rec.PerUnit); err != nil {
		return err
	}
	if missing := missingSessions(rec); len(missing) > 0 {
		fmt.Fprintf(w, "not measured: %s session(s) (the experiment failed or was interrupted)\n", spec.FormatSessions(missing))
	}
	_, err := fmt.Fprintf(w, "\nresults: %s (one directory per session count; obsbench report %s)\n", dir, dir)
	return err
}

// missingSessions are the session counts of rec without a summary.
func missingSessions(rec SweepRecord) []int {
	var out []int
	for _, n := range rec.Sessions {
		if !slices.ContainsFunc(rec.Points, func(p SweepPoint) bool { return p.Sessions == n }) {
			out = append(out, n)
		}
	}
	return out
}

// WriteSweep writes a sweep's record in its directory.
func WriteSweep(dir string, rec SweepRecord) error {
	b, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, SweepFile), append(b, '\n'), 0o600)
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
	slices.SortFunc(rec.Points, func(a, b SweepPoint) int { return a.Sessions - b.Sessions })
	return rec, true, nil
}
