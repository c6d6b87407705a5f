package main

import (
	"context"
	"fmt"
	"io"

	"github.com/obsbench/obsbench/internal/dataset"
	"github.com/obsbench/obsbench/internal/engine/mariadb"
	"github.com/obsbench/obsbench/internal/engine/postgres"
	"github.com/obsbench/obsbench/internal/journal"
	"github.com/obsbench/obsbench/internal/observer"
)

// planner is what --dry-run asks of an engine: the statements it would
// run, without running them.
type planner interface {
	Ping(ctx context.Context) error
	PlanLoad(ctx context.Context, d dataset.Dataset) ([]string, error)
	PlanApply(ctx context.Context, o observer.Observer) (apply, revert []string, err error)
}

// dryRun prints what a run would change on the --dsn server, reading only.
func dryRun(ctx context.Context, c runConfig, w io.Writer) error {
	var srv planner = postgres.New(c.dsn, postgres.Options{Schema: externalSchema})
	where := "schema"
	if c.engine == "mariadb" {
		m, err := mariadb.New(c.dsn, mariadb.Options{Database: externalSchema})
		if err != nil {
			return usagef("--dsn: %v", err)
		}
		srv, where = m, "database"
	}
	if err := srv.Ping(ctx); err != nil {
		return usagef("--dsn: %v (%s)", err, redactDSN(c.dsn))
	}
	fmt.Fprintf(w, "dry run on %s: nothing is changed\n\n", redactDSN(c.dsn))
	load, err := srv.PlanLoad(ctx, c.ds)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "dataset %s in %s %s:\n", c.ds.Name, where, externalSchema)
	if len(load) == 0 {
		fmt.Fprintln(w, "  already loaded; nothing to do")
	}
	for _, st := range load {
		fmt.Fprintf(w, "  %s\n", st)
	}
	if setup := c.wl.SetupFor(c.engine); len(setup) > 0 {
		fmt.Fprintf(w, "workload %s set-up:\n", c.wl.Name)
		for _, st := range setup {
			fmt.Fprintf(w, "  %s\n", st)
		}
	}
	for _, o := range c.observers[1:] {
		apply, revert, err := srv.PlanApply(ctx, o)
		if err != nil {
			fmt.Fprintf(w, "\nobserver %s: cannot be applied here: %v\n", o.Name, err)
			continue
		}
		fmt.Fprintf(w, "\nobserver %s, before each of its runs:\n", o.Name)
		if len(apply) == 0 {
			fmt.Fprintln(w, "  nothing to change: already in force")
		}
		for _, st := range apply {
			fmt.Fprintf(w, "  %s\n", st)
		}
		if len(revert) > 0 {
			fmt.Fprintln(w, "and after each, to revert:")
			for _, st := range revert {
				fmt.Fprintf(w, "  %s\n", st)
			}
		}
	}
	fmt.Fprintf(w, "\nEvery change would be journaled in %s before it is made (obsbench restore undoes them after a crash).\n", journal.Dir())
	return nil
}
