package app

import (
	"fmt"
	"io"
	"strings"

	"github.com/obsbench/obsbench/internal/engine"
	"github.com/obsbench/obsbench/internal/experiment"
	"github.com/obsbench/obsbench/internal/result"
)

// splitOf is what a split needs beside its server: the engine's division
// of each observer (its groups are the run's sessions, taken in turn).
func (c Experiment) splitOf() (*experiment.Split, error) {
	e, err := engine.Lookup(c.Engine)
	if err != nil {
		return nil, err
	}
	ss, ok := e.(engine.SessionSplitter)
	if _, sessions := e.(engine.SessionOpener); !ok || !sessions {
		return nil, usagef("--method split: the %s engine cannot split its observers between groups of sessions yet", c.Engine)
	}
	// A managed server's backends are on this machine: each session reads its CPU.
	return &experiment.Split{Divide: ss.SplitSessions, SQL: ss.SessionSQL, ServerCPU: c.DSN == ""}, nil
}

// checkSplit refuses, before anything starts, a split that cannot run:
// sessions that make no two equal groups, a sampler that would see both
// groups as one, and every observer with no per-session part.
func (c Experiment) checkSplit() error {
	if c.Method != result.MethodSplit {
		return nil
	}
	sp, err := c.splitOf()
	if err != nil {
		return err
	}
	switch {
	case c.Clients < 2 || c.Clients%2 != 0:
		return usagef("--method split: the workload's %d session(s) make no two equal groups; give --clients, an even number of at least 2", c.Clients)
	case c.Waits > 0:
		return usagef("--waits with --method split: the sampler would see both groups of sessions as one; not yet with a split")
	}
	if err := sp.Check(c.observers); err != nil {
		msg := strings.ReplaceAll(err.Error(), "\n", "; ")
		return usagef("--method split: %s; leave it out, or measure it by --method duet or auto, which measure an observer whole", msg)
	}
	return nil
}

// printSplit prints head, then what each observer's split sets
// (Split.Plan), for a plan or a dry run.
func (c Experiment) printSplit(w io.Writer, head string) error {
	sp, err := c.splitOf()
	if err != nil {
		return err
	}
	lines, err := sp.Plan(c.observers)
	fmt.Fprintln(w, head)
	for _, l := range lines {
		fmt.Fprintf(w, "  %s\n", l)
	}
	return err
}
