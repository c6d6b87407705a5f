package studyrun

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"

	"github.com/obsbench/obsbench/internal/app"
	"github.com/obsbench/obsbench/internal/report"
	"github.com/obsbench/obsbench/internal/result"
	"github.com/obsbench/obsbench/internal/spec"
	"github.com/obsbench/obsbench/internal/study"
	"github.com/obsbench/obsbench/internal/workload"
)

// Spec is the experiment of study st, as a spec, the settings the
// study chooses marked chosen (flags given after it override them).
func Spec(st study.Study) spec.Spec {
	s := spec.Default()
	// A study keeps to its own time: its conditions are counted in
	// instructions only when asked (--count).
	s.Count.After = false
	// Nor does it count rounds more than its own unless --count-width
	// asks.
	s.Count.Width = 0
	s.Choose("engine", "workload", "observers", "method", "waits")
	s.Engine, s.Workload, s.Observers, s.Method = st.Engine, st.Workload, st.Observers(), st.Method
	if len(st.Workloads) > 0 {
		s.Workload = st.Workloads[0]
	}
	s.Waits = st.Waits
	if len(st.Sessions) > 0 {
		s.Sessions = slices.Clone(st.Sessions)
		s.Choose("sessions")
	} else {
		s.Clients = st.Clients
		s.Choose("clients")
	}
	if st.Standby != "" {
		s.Standby = st.Standby
		s.Choose("standby")
	}
	if st.Rounds > 0 {
		s.Rounds = st.Rounds
		s.Choose("rounds")
	}
	if st.Duration > 0 {
		s.Duration = st.Duration
		s.Choose("duration")
	}
	// A study's own workload parameters (study 3's --blocks 1).
	for name, v := range st.Params {
		if s.Params == nil {
			s.Params = map[string]int{}
		}
		s.Params[name] = v
		s.Choose(name)
	}
	if st.Count != nil {
		// Counted where it can be (the run says why not where it
		// cannot), one session at a time: sessions at once count their
		// contention too, which a loaded machine grows.
		s.Count.After = true
		s.Count.Statements, s.Count.Warmup, s.Count.Sessions = st.Count.Statements, st.Count.Warmup, 1
		s.Count.Shrink = st.Count.Shrink
	}
	s.Study = st.Name
	return s
}

// Run runs study st with the experiment s (the study's spec, changed by
// the user's flags) and prints the study's own table after the report;
// with --method instructions, its counted part alone.
func Run(ctx context.Context, st study.Study, s spec.Spec, o Options, out app.Output) error {
	if s.Method.Counted() {
		cs, err := countedOnly(st, s, o.User)
		if err != nil {
			return err
		}
		return app.Execute(ctx, cs, out)
	}
	switch {
	case st.Audit != "":
		return auditStudy(ctx, st, s, o, out)
	case st.Replay:
		return replayStudy(ctx, st, s, o, out)
	case len(st.Workloads) > 0:
		return workloadsStudy(ctx, st, s, out)
	}
	c, err := app.ResolveIn(s, out)
	if err != nil {
		return err
	}
	if s.DryRun {
		return c.PrintPlan(ctx, out.Stdout)
	}
	sum, err := c.Run(ctx, out)
	return c.Gate(sum, c.PrintStudy(out.Stdout, sum, err))
}

// forWorkload is s on workload wl: the parameters wl does not take are
// dropped (a study's --batch goes to the workloads that have it).
func forWorkload(s spec.Spec, wl string) spec.Spec {
	s.Workload = wl
	m, err := workload.Lookup(wl)
	if err != nil || len(s.Params) == 0 {
		return s
	}
	s.Params = maps.Clone(s.Params)
	for name := range s.Params {
		if !m.HasParam(name) {
			delete(s.Params, name)
			s.Unchoose(name)
		}
	}
	return s
}

// workloadsStudy runs st's experiment once per workload, each in its own
// directory under --out, then prints the study's table over all of them.
func workloadsStudy(ctx context.Context, st study.Study, s spec.Spec, out app.Output) error {
	var sums []result.Summary
	var errs []error
	base := ""
	for _, wl := range st.Workloads {
		ws := forWorkload(s, wl)
		if base != "" {
			ws.Out = filepath.Join(base, wl)
		}
		c, err := app.ResolveIn(ws, out)
		if err != nil {
			return err
		}
		if s.DryRun {
			fmt.Fprintf(out.Stdout, "== %s: workload %s ==\n", st.Name, wl)
			if err := c.PrintPlan(ctx, out.Stdout); err != nil {
				return err
			}
			continue
		}
		if base == "" {
			// The first workload's directory is the study's; each
			// workload's experiment is recorded in its own below it.
			base = c.Out
			c.Out = filepath.Join(base, wl)
			if err := app.CheckOut(c.Out); err != nil {
				return err
			}
		}
		fmt.Fprintf(out.Stdout, "== %s: workload %s ==\n", st.Name, wl)
		sum, err := c.Run(ctx, out)
		if sum != nil {
			sums = append(sums, *sum)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", wl, err))
			if ctx.Err() != nil || c.OnFailure.Stops() {
				break
			}
		} else {
			errs = append(errs, c.Gate(sum, nil))
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
