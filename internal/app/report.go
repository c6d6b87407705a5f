package app

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/obsbench/obsbench/internal/analysis"
	"github.com/obsbench/obsbench/internal/report"
	"github.com/obsbench/obsbench/internal/result"
	"github.com/obsbench/obsbench/internal/spec"
)

// Gate fails a finished experiment whose observers exceed the limits it
// was given (analysis.Limits.Gate); err, when the experiment failed.
func (c Experiment) Gate(sum *result.Summary, err error) error {
	if err != nil || sum == nil {
		return err
	}
	return c.limits().Gate(*sum)
}

// limits are the gates of c's flags.
func (c Experiment) limits() analysis.Limits {
	return analysis.Limits{Overhead: c.MaxOverhead, Counted: c.MaxCountedOverhead, Latency: c.MaxLatencyAdded}
}

// writeReport writes dir/report.html and prints the report in format, from
// the runs the summary was made of.
func writeReport(dir string, format spec.Format, wide bool, sum result.Summary, runs []result.Run, stdout io.Writer) error {
	if err := report.WriteHTMLFile(dir, sum, runs); err != nil {
		return err
	}
	if format == spec.FormatText {
		fmt.Fprintln(stdout)
	}
	return write(stdout, format, wide, sum, runs)
}

// write prints sum in format, the text table with every column if wide.
func write(w io.Writer, format spec.Format, wide bool, sum result.Summary, runs []result.Run) error {
	if format == spec.FormatText && wide {
		return report.TextWide(w, sum)
	}
	return report.Write(w, format, sum, runs)
}

// Report renders the report of a finished (or interrupted) experiment in
// dir: report.html, or format on stdout (the text table with every column
// if wide); a sweep's table.
func Report(dir string, format spec.Format, wide bool, stdout io.Writer) error {
	if dir == "" {
		return usagef("usage: obsbench report DIR [--format html|%s]", strings.Join(spec.Names(report.Formats), "|"))
	}
	if format != spec.FormatHTML && !slices.Contains(report.Formats, format) {
		return usagef("--format %q: want html or one of %s", format, strings.Join(spec.Names(report.Formats), ", "))
	}
	if wide && format != spec.FormatText {
		return usagef("-v widens the text table: give --format text too")
	}
	if rec, ok, err := report.ReadSweep(dir); ok || err != nil {
		if err != nil {
			return err
		}
		if format != spec.FormatHTML && format != spec.FormatText && format != spec.FormatJSON {
			return usagef("%s is a sweep: --format text or json (each sessions-N directory has its own report)", dir)
		}
		if format == spec.FormatHTML && len(rec.Loads) > 0 {
			if err := report.WriteLoadSweepHTMLFile(dir, rec); err != nil {
				return err
			}
			_, err := fmt.Fprintln(stdout, filepath.Join(dir, "report.html"))
			return err
		}
		if format == spec.FormatHTML {
			format = spec.FormatText
		}
		return report.PrintSweep(stdout, format, dir, rec)
	}
	sum, err := result.ReadSummary(filepath.Join(dir, "summary.json"))
	if err != nil {
		return usagef("%v (give a results directory of obsbench run or study)", err)
	}
	runsPath := filepath.Join(dir, "results.jsonl")
	runs, err := result.ReadRuns(runsPath)
	switch {
	case errors.Is(err, os.ErrNotExist) && format == spec.FormatBenchstat:
		return usagef("--format benchstat prints each run, from %s, which is not there; --format text, markdown, json or csv print the summary", runsPath)
	case err != nil && !errors.Is(err, os.ErrNotExist):
		return err
	}
	if format != spec.FormatHTML {
		return write(stdout, format, wide, sum, runs)
	}
	if err := report.WriteHTMLFile(dir, sum, runs); err != nil {
		return err
	}
	fmt.Fprintln(stdout, filepath.Join(dir, "report.html"))
	return nil
}
