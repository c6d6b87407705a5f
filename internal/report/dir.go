package report

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/obsbench/obsbench/internal/result"
	"github.com/obsbench/obsbench/internal/spec"
)

// WriteDir writes dir/report.html and prints the report in format, from
// the runs the summary was made of.
func WriteDir(dir string, format spec.Format, wide bool, sum result.Summary, runs []result.Run, stdout io.Writer) error {
	if err := WriteHTMLFile(dir, sum, runs); err != nil {
		return err
	}
	if format == spec.FormatText {
		fmt.Fprintln(stdout)
	}
	return Print(stdout, format, wide, sum, runs)
}

// Print prints sum in format, the text table with every column if wide.
func Print(w io.Writer, format spec.Format, wide bool, sum result.Summary, runs []result.Run) error {
	if format == spec.FormatText && wide {
		return TextWide(w, sum)
	}
	return Write(w, format, sum, runs)
}

// RenderDir renders the report of a finished (or interrupted) experiment in
// dir: report.html, or format on stdout (the text table with every column
// if wide); a sweep's table.
func RenderDir(dir string, format spec.Format, wide bool, stdout io.Writer) error {
	if dir == "" {
		return spec.Invalidf("usage: obsbench report DIR [--format html|%s]", strings.Join(spec.Names(Formats), "|"))
	}
	if format != spec.FormatHTML && !slices.Contains(Formats, format) {
		return spec.Invalidf("--format %q: want html or one of %s", format, strings.Join(spec.Names(Formats), ", "))
	}
	if wide && format != spec.FormatText {
		return spec.Invalidf("-v widens the text table: give --format text too")
	}
	if rec, ok, err := ReadSweep(dir); ok || err != nil {
		if err != nil {
			return err
		}
		if format != spec.FormatHTML && format != spec.FormatText && format != spec.FormatJSON {
			return spec.Invalidf("%s is a sweep: --format text or json (each sessions-N directory has its own report)", dir)
		}
		if format == spec.FormatHTML {
			wrote, err := writeSweepHTML(dir, rec)
			switch {
			case err != nil:
				return err
			case wrote:
				_, err := fmt.Fprintln(stdout, filepath.Join(dir, "report.html"))
				return err
			}
			format = spec.FormatText // a sweep of sessions has no page
		}
		return PrintSweep(stdout, format, dir, rec)
	}
	sum, err := result.ReadSummary(filepath.Join(dir, "summary.json"))
	if err != nil {
		return spec.Invalidf("%v (give a results directory of obsbench run or study)", err)
	}
	runsPath := filepath.Join(dir, "results.jsonl")
	runs, err := result.ReadRuns(runsPath)
	switch {
	case errors.Is(err, os.ErrNotExist) && format == spec.FormatBenchstat:
		return spec.Invalidf("--format benchstat prints each run, from %s, which is not there; --format text, markdown, json or csv print the summary", runsPath)
	case err != nil && !errors.Is(err, os.ErrNotExist):
		return err
	}
	if format != spec.FormatHTML {
		return Print(stdout, format, wide, sum, runs)
	}
	if err := WriteHTMLFile(dir, sum, runs); err != nil {
		return err
	}
	fmt.Fprintln(stdout, filepath.Join(dir, "report.html"))
	return nil
}
