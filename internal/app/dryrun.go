package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/obsbench/obsbench/internal/engine"
	"github.com/obsbench/obsbench/internal/pgbench"
	"github.com/obsbench/obsbench/internal/result"
	"github.com/obsbench/obsbench/internal/spec"
	"github.com/obsbench/obsbench/internal/workloadspec"
)

// PrintPlan prints what Run would change on the --dsn server (--dry-run),
// reading only; on a managed server, its plan (planManaged).
func (c Experiment) PrintPlan(ctx context.Context, w io.Writer) error {
	if c.DSN == "" {
		return planManaged(c, w)
	}
	eng, err := engine.Lookup(c.Engine)
	if err != nil {
		return spec.FromEngine(err, "--dsn")
	}
	srv, err := eng.Planner(c.DSN)
	if err != nil {
		return spec.FromEngine(err, "--dsn")
	}
	if err := srv.Ping(ctx); err != nil {
		return usagef("--dsn: %v (%s)", err, engine.RedactDSN(c.DSN))
	}
	fmt.Fprintf(w, "dry run on %s: nothing is changed\n\n", engine.RedactDSN(c.DSN))
	if err := c.printPairing(w); err != nil {
		return err
	}
	if pc, ok := srv.(engine.PermissionChecker); ok {
		q, err := pc.CheckPermissions(ctx, c.observers)
		var perms *engine.PermissionError
		if err != nil && !errors.As(err, &perms) {
			return err
		}
		fmt.Fprintf(w, "permissions this run needs, checked first (read only):\n  %s\n", indent(q))
		if perms != nil {
			// Worth showing the plan all the same: a DBA reviews it
			// before granting anything.
			fmt.Fprintf(w, "note: a real run would stop at this point: %v\n\n", perms)
		} else {
			fmt.Fprintf(w, "the login has them all\n\n")
		}
	}
	load, err := srv.PlanLoad(ctx, c.ds)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "dataset %s in %s %s:\n", c.ds.Name, eng.Info().Namespace, engine.Home)
	if len(load) == 0 {
		fmt.Fprintln(w, "  already loaded; nothing to do")
	}
	for _, st := range load {
		fmt.Fprintf(w, "  %s\n", st)
	}
	setup, stmts := c.wl.SetupIn(c.info.Dialect), []string(nil)
	if wp, ok := srv.(engine.WorkloadPlanner); ok {
		if setup, stmts, err = wp.PlanWorkload(ctx, c.wl, c.Engine); err != nil {
			return err
		}
	}
	if len(setup) > 0 {
		fmt.Fprintf(w, "workload %s set-up:\n", c.wl.Name)
		for _, st := range setup {
			fmt.Fprintf(w, "  %s\n", st)
		}
	}
	if m := workloadspec.QueryModeName(c.Spec); m != "" {
		fmt.Fprintf(w, "query mode %s: %s\n", m, workloadspec.QueryModeMeaning[pgbench.QueryMode(m)])
	}
	if len(stmts) > 0 {
		fmt.Fprintf(w, "workload %s, in each session, over and over:\n", c.wl.Name)
		for _, st := range stmts {
			fmt.Fprintf(w, "  %s\n", st)
		}
	}
	if err := planObservers(ctx, w, srv, c); err != nil {
		return err
	}
	if rp, ok := srv.(engine.ReadPlanner); ok {
		fmt.Fprintln(w, "\nread at the start and end of every measured window (and every 10 ms for waits, with --waits):")
		for _, st := range rp.PlanReads() {
			fmt.Fprintf(w, "  %s\n", indent(st))
		}
	}
	fmt.Fprintf(w, "\nEvery change would be journaled in %s before it is made (obsbench restore undoes them after a crash).\n", c.out.StateDir)
	return nil
}

// printPairing says, for a dry run, what a duet's twin gets, or what a
// split's observed sessions set.
func (c Experiment) printPairing(w io.Writer) error {
	if c.Method.Twins() {
		fmt.Fprintf(w, "duet: the twin %s gets the same observer changes and reverts in the phases it has the observer (half of them); it must already hold the dataset (nothing is loaded there); on this machine, a cgroup for each twin's worker\n\n",
			engine.RedactDSN(c.TwinDSN))
	}
	if !c.Method.Splits() && len(c.splitByDefault) == 0 {
		return nil
	}
	where := "split: two groups of %d sessions on this server"
	if c.Method.Twins() {
		where = "split beside the duet: two groups of %d sessions on this server, the first twin"
	}
	err := c.printSplit(w, fmt.Sprintf(where+"; the observed group's sessions set, each for itself (these end with the session and change nothing else):", c.Clients/2))
	fmt.Fprintln(w)
	return err
}

// planObservers prints, for each observer of c, the statements that
// apply it before each of its runs, revert it after, and count its events.
func planObservers(ctx context.Context, w io.Writer, srv engine.Planner, c Experiment) error {
	split, err := c.splitOf() // used only by a split, whose plan has said any error
	for _, o := range c.observers[1:] {
		name := o.Name
		if (c.Method == result.MethodSplit || slices.Contains(c.splitByDefault, name)) && err == nil {
			part, _ := split.Divide(o) // the server gets the shared part
			o = part.Shared
		}
		apply, revert, err := srv.PlanApply(ctx, o)
		if err != nil {
			fmt.Fprintf(w, "\nobserver %s: cannot be applied to this server: %v\n", name, err)
			continue
		}
		fmt.Fprintf(w, "\nobserver %s, before each of its runs:\n", name)
		if len(apply) == 0 {
			fmt.Fprintln(w, "  nothing to change: already in force")
		}
		for _, st := range apply {
			fmt.Fprintf(w, "  %s\n", indent(st))
		}
		if len(revert) > 0 {
			fmt.Fprintln(w, "and after each, to revert:")
			for _, st := range revert {
				fmt.Fprintf(w, "  %s\n", indent(st))
			}
		}
		if rp, ok := srv.(engine.ReadPlanner); ok {
			count, err := rp.PlanEvents(ctx, o, c.wl.Tag)
			if err != nil {
				return err
			}
			if len(count) > 0 {
				fmt.Fprintln(w, "and at the end of each, to count its events:")
				for _, st := range count {
					fmt.Fprintf(w, "  %s\n", indent(st))
				}
			}
		}
	}
	return nil
}

// indent keeps a multi-line statement's later lines under its first.
func indent(st string) string { return strings.ReplaceAll(st, "\n", "\n  ") }
