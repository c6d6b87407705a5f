package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"slices"

	"github.com/obsbench/obsbench/internal/report"
	"github.com/obsbench/obsbench/internal/result"
	"github.com/obsbench/obsbench/internal/spec"
	"github.com/obsbench/obsbench/internal/study"
	"github.com/obsbench/obsbench/internal/workload"
)

// StudySpec is the experiment of study st, as a spec, and the settings the
// study chooses (which flags given after it override).
func StudySpec(st study.Study) (spec.Spec, Given) {
	s := Default()
	given := Given{"engine": true, "workload": true, "observers": true, "method": true, "waits": true}
	s.Engine, s.Workload, s.Observers, s.Method = st.Engine, st.Workload, st.Observers(), st.Method
	if len(st.Workloads) > 0 {
		s.Workload = st.Workloads[0]
	}
	s.Waits = st.Waits
	if len(st.Sessions) > 0 {
		s.Sessions = slices.Clone(st.Sessions)
		given["sessions"] = true
	} else {
		s.Clients = st.Clients
		given["clients"] = true
	}
	if st.Standby != "" {
		s.Standby = st.Standby
		given["standby"] = true
	}
	if st.Rounds > 0 {
		s.Rounds = st.Rounds
		given["rounds"] = true
	}
	if st.Duration > 0 {
		s.Duration = st.Duration
		given["duration"] = true
	}
	// A study's own workload parameters (study 3's --blocks 1).
	for name, v := range st.Params {
		if s.Params == nil {
			s.Params = map[string]int{}
		}
		s.Params[name] = v
		given[name] = true
	}
	s.Study = st.Name
	return s, given
}

// Study runs study st with the experiment s (the study's spec, changed by
// the user's flags) and prints the study's own table after the report.
func Study(ctx context.Context, st study.Study, s spec.Spec, given Given, o StudyOptions, out Output) error {
	switch {
	case st.Audit != "":
		return auditStudy(ctx, st, s, given, o, out)
	case st.Replay:
		return replayStudy(ctx, st, s, given, o, out)
	case len(st.Workloads) > 0:
		return workloadsStudy(ctx, st, s, given, out)
	}
	c, err := Resolve(s, given)
	if err != nil {
		return err
	}
	if given["dry-run"] {
		return dryRunOf(ctx, c, out.Stdout)
	}
	sum, err := runExperiment(ctx, c, out)
	return gate(c, sum, printStudy(out.Stdout, c, sum, err))
}

// forWorkload is s on workload wl: the parameters wl does not take are
// dropped (a study's --batch goes to the workloads that have it).
func forWorkload(s spec.Spec, given Given, wl string) (spec.Spec, Given) {
	s.Workload = wl
	m, err := workload.Lookup(wl)
	if err != nil || len(s.Params) == 0 {
		return s, given
	}
	given = maps.Clone(given)
	s.Params = maps.Clone(s.Params)
	for name := range s.Params {
		if !m.HasParam(name) {
			delete(s.Params, name)
			delete(given, name)
		}
	}
	return s, given
}

// workloadsStudy runs st's experiment once per workload, each in its own
// directory under --out, then prints the study's table over all of them.
func workloadsStudy(ctx context.Context, st study.Study, s spec.Spec, given Given, out Output) error {
	var sums []result.Summary
	var errs []error
	base := ""
	for _, wl := range st.Workloads {
		ws, wg := forWorkload(s, given, wl)
		if base != "" {
			ws.Out = filepath.Join(base, wl)
		}
		c, err := Resolve(ws, wg)
		if err != nil {
			return err
		}
		if given["dry-run"] {
			fmt.Fprintf(out.Stdout, "== %s: workload %s ==\n", st.Name, wl)
			if err := dryRunOf(ctx, c, out.Stdout); err != nil {
				return err
			}
			continue
		}
		if base == "" {
			// The first workload's directory is the study's; each
			// workload's experiment is recorded in its own below it.
			base = c.Out
			c.Out = filepath.Join(base, wl)
			if err := checkOut(c.Out); err != nil {
				return err
			}
		}
		fmt.Fprintf(out.Stdout, "== %s: workload %s ==\n", st.Name, wl)
		sum, err := runExperiment(ctx, c, out)
		if sum != nil {
			sums = append(sums, *sum)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", wl, err))
			if ctx.Err() != nil || c.OnFailure == "stop" {
				break
			}
		} else {
			errs = append(errs, gate(c, sum, nil))
		}
		fmt.Fprintln(out.Stdout)
	}
	if len(sums) > 0 {
		if err := report.SyncCommit(out.Stdout, st, sums); err != nil {
			errs = append(errs, err)
		}
		fmt.Fprintf(out.Stdout, "\nresults: %s (one directory per workload)\n", base)
	}
	return errors.Join(errs...)
}

// printStudy prints the study's table after its experiment, when the
// experiment is one (also when it was resumed).
func printStudy(w io.Writer, c runConfig, sum *result.Summary, err error) error {
	if sum == nil || c.Study == "" || c.Format != "text" {
		return err
	}
	st, lerr := study.Lookup(c.Engine, c.Study)
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
