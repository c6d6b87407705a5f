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

// Gate fails a finished experiment whose observers cost more than
// --max-overhead (analysis.GateTimed), add more counted instructions
// per statement than --max-counted-overhead (analysis.GateCounted) or
// more p99 latency at a rate than --max-latency-added
// (analysis.GateLatency), a *analysis.OverheadError for each gate that
// fails; err, when the experiment failed.
func (c Experiment) Gate(sum *result.Summary, err error) error {
	if err != nil || sum == nil {
		return err
	}
	var timed, counted, latency error
	if c.MaxOverhead != nil {
		timed = analysis.GateTimed(*c.MaxOverhead, *sum)
	}
	if c.MaxLatencyAdded != nil {
		latency = analysis.GateLatency(*c.MaxLatencyAdded, *sum)
	}
	if c.MaxCountedOverhead != nil {
		switch k := sum.Counted; {
		case k == nil:
			counted = errors.New("--max-counted-overhead: nothing was counted, so nothing is gated")
		case k.Error != "":
			counted = fmt.Errorf("--max-counted-overhead: the counted runs failed (%s), so nothing is gated", k.Error)
		default:
			counted = analysis.GateCounted("max-counted-overhead", *c.MaxCountedOverhead, k.Conditions)
		}
	}
	return errors.Join(timed, counted, latency)
}

// gateCounted fails a counted experiment (--method instructions) whose
// observers add more than --max-overhead or --max-counted-overhead to the
// session's instructions per statement: both limits gate the one figure.
func gateCounted(c Experiment, conds []result.CountedCondition) error {
	var errs []error
	if c.MaxOverhead != nil {
		errs = append(errs, analysis.GateCounted("max-overhead", *c.MaxOverhead, conds))
	}
	if c.MaxCountedOverhead != nil {
		errs = append(errs, analysis.GateCounted("max-counted-overhead", *c.MaxCountedOverhead, conds))
	}
	return errors.Join(errs...)
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
