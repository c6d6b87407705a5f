package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/obsbench/obsbench/internal/report"
	"github.com/obsbench/obsbench/internal/result"
	"github.com/obsbench/obsbench/internal/study"
	"github.com/obsbench/obsbench/internal/workload"
)

const studyUsage = `usage: obsbench study <name> [study flags] [run flags]
       obsbench study list
       obsbench study <name> -h

Runs a built-in study: a fixed workload, observers and method that
reproduce one of the published studies obsbench grew from, and prints the
study's own table after the usual report. Any flag of 'obsbench run' may be
given to change the defaults (e.g. --rounds 10, --duration 30s);
'obsbench study <name> -h' shows a study's defaults and its own flags.
`

func studyCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprint(stdout, studyUsage)
		if len(args) == 0 {
			return usagef("name a study (obsbench study list)")
		}
		return errHelp
	}
	engine := engineOf(args[1:])
	if args[0] == "list" {
		for _, name := range study.Names(engine) {
			st, _ := study.Lookup(name, engine)
			fmt.Fprintf(stdout, "%-18s %s\n", name, st.Title)
		}
		return nil
	}
	st, err := study.Lookup(args[0], engine)
	if err != nil {
		return usageError{Err: err}
	}
	if wantsHelp(args[1:]) {
		studyHelp(stdout, st)
		return errHelp
	}
	switch {
	case st.Audit != "":
		return auditStudy(ctx, st, args[1:], stdout, stderr)
	case st.Replay:
		return replayStudy(ctx, st, args[1:], stdout, stderr)
	case len(st.Workloads) > 0:
		return workloadsStudy(ctx, st, args[1:], stdout, stderr)
	}
	c, err := parseRun(studyArgs(st, st.Workload, args[1:]), stderr)
	if err != nil {
		return err
	}
	c.study = st.Name
	if c.dryRun {
		return dryRun(ctx, c, stdout)
	}
	sum, err := runExperiment(ctx, c, stdout, stderr)
	return gate(c, sum, printStudy(stdout, c, sum, err))
}

// studyArgs are the run flags of st's experiment on workload: the study's
// settings first, so that the user's flags, after them, win.
func studyArgs(st study.Study, wl string, args []string) []string {
	out := []string{
		"--engine", st.Engine, "--workload", wl, "--clients", strconv.Itoa(st.Clients),
		"--observers", strings.Join(st.Observers(), ","), "--method", st.Method, "--waits", st.Waits,
	}
	if st.Standby != "" {
		out = append(out, "--standby", st.Standby)
	}
	if st.Rounds > 0 {
		out = append(out, "--rounds", strconv.Itoa(st.Rounds))
	}
	if st.Duration != "" {
		out = append(out, "--duration", st.Duration)
	}
	out = append(out, st.Args...)
	return append(out, args...)
}

// workloadsStudy runs st's experiment once per workload, each in its own
// directory under --out, then prints the study's table over all of them.
func workloadsStudy(ctx context.Context, st study.Study, args []string, stdout, stderr io.Writer) error {
	var sums []result.Summary
	var errs []error
	base := ""
	for _, wl := range st.Workloads {
		c, err := parseRun(studyArgs(st, wl, ownParams(wl, args)), stderr)
		if err != nil {
			return err
		}
		if c.dryRun {
			fmt.Fprintf(stdout, "== %s: workload %s ==\n", st.Name, wl)
			if err := dryRun(ctx, c, stdout); err != nil {
				return err
			}
			continue
		}
		if base == "" {
			base = c.out
		}
		c.out = filepath.Join(base, wl)
		if err := checkOut(c.out); err != nil {
			return err
		}
		// Recorded as the experiment it is, in its own directory.
		c.args = append(dropFlag(c.args, "out"), "--out", c.out)
		c.study = st.Name
		fmt.Fprintf(stdout, "== %s: workload %s ==\n", st.Name, wl)
		sum, err := runExperiment(ctx, c, stdout, stderr)
		if sum != nil {
			sums = append(sums, *sum)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", wl, err))
			if ctx.Err() != nil || c.onFailure == "stop" {
				break
			}
		} else {
			errs = append(errs, gate(c, sum, nil))
		}
		fmt.Fprintln(stdout)
	}
	if len(sums) > 0 {
		if err := report.SyncCommit(stdout, st, sums); err != nil {
			errs = append(errs, err)
		}
		fmt.Fprintf(stdout, "\nresults: %s (one directory per workload)\n", base)
	}
	return errors.Join(errs...)
}

// ownParams drops from args the workload parameters that workload wl
// does not take: a study's flags (--batch) go to the workloads that have
// them.
func ownParams(wl string, args []string) []string {
	m, err := workload.Lookup(wl)
	if err != nil {
		return args
	}
	for _, p := range workload.AllParams() {
		if !m.HasParam(p.Name) {
			args = dropFlag(args, p.Name)
		}
	}
	return args
}

// printStudy prints the study's table after its experiment, when the
// experiment is one (also when it was resumed).
func printStudy(w io.Writer, c runConfig, sum *result.Summary, err error) error {
	if sum == nil || c.study == "" || c.format != "text" {
		return err
	}
	st, lerr := study.Lookup(c.study, c.engine)
	if lerr != nil {
		return errors.Join(err, lerr)
	}
	if len(st.Workloads) > 0 {
		return err // the study's table comes after all its workloads
	}
	fmt.Fprintln(w)
	switch {
	case len(st.Matrix) > 0:
		return errors.Join(err, report.Targets(w, st, *sum))
	case st.Replay:
		return errors.Join(err, report.Replay(w, st, *sum))
	}
	return errors.Join(err, report.Study(w, st, *sum))
}

// engineOf finds --engine among run flags, postgres by default.
func engineOf(args []string) string {
	if values, _, _ := cutFlag(args, "engine"); len(values) > 0 {
		return values[0]
	}
	return "postgres"
}
