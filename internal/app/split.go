package app

import (
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"

	"github.com/obsbench/obsbench/internal/engine"
	"github.com/obsbench/obsbench/internal/experiment"
	"github.com/obsbench/obsbench/internal/observer"
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
	// Each session reads its backend's CPU where the engine finds it on
	// this machine (a managed server's, an external one running here);
	// elsewhere the clocks cannot open, and the split reads throughput.
	return &experiment.Split{Divide: ss.SplitSessions, SQL: ss.SessionSQL, ServerCPU: true}, nil
}

// chooseSplit, where no method was given and the run is on one external
// server with no twin, measures by split the observers that split: all
// of them by --method split, or those beside the others' auto
// (splitByDefault). Where the sessions, the rounds or another flag rule
// a split out, auto stays as it is.
func (c *Experiment) chooseSplit() {
	asSplit := c.Spec
	asSplit.Method = result.MethodSplit
	// ValidateDuet refuses, among the rest, an odd --rounds.
	if !c.methodChosen || c.Method != result.MethodAuto || c.DSN == "" || c.Waits > 0 || c.Clients < 2 || c.Clients%2 != 0 ||
		asSplit.ValidateDuet(runtime.NumCPU()) != nil {
		return
	}
	sp, err := c.splitOf()
	if err != nil {
		return
	}
	split, whole := sp.Divisible(c.observers)
	switch {
	case len(split) == 0:
		return
	case len(whole) == 0:
		c.Method = result.MethodSplit
		c.pairedDefaults()
	}
	c.splitByDefault = split
}

// splitNote says, on a run's first lines, which observers chooseSplit
// measures by split.
func (c Experiment) splitNote() string {
	if c.Method == result.MethodSplit {
		return "every observer splits between two groups of sessions on the server, so each is measured by split (--method auto measures them whole)"
	}
	return fmt.Sprintf("by split, between two groups of sessions on the server: %s; the rest whole, by auto (--method auto measures all of them whole)", strings.Join(c.splitByDefault, ", "))
}

// checkSplit refuses, before anything starts, a split that cannot run:
// sessions that make no two equal groups, a sampler that would see both
// groups as one, and every observer with no per-session part.
func (c Experiment) checkSplit() error {
	if !c.Method.Splits() {
		return nil
	}
	sp, err := c.splitOf()
	if err != nil {
		return err
	}
	switch {
	case c.Clients < 2 || c.Clients%2 != 0:
		return usagef("--method %s: the workload's %d session(s) make no two equal groups; give --clients, an even number of at least 2", c.Method, c.Clients)
	case c.Waits > 0:
		return usagef("--waits with --method %s: the sampler would see both groups of sessions as one; not yet with a split", c.Method)
	}
	if err := sp.Check(c.observers); err != nil {
		msg := strings.ReplaceAll(err.Error(), "\n", "; ")
		return usagef("--method %s: %s; leave it out, or measure it by --method duet or auto, which measure an observer whole", c.Method, msg)
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
	observers := c.observers
	if !c.Method.Splits() {
		observers = slices.DeleteFunc(slices.Clone(observers), func(o observer.Observer) bool { return !slices.Contains(c.splitByDefault, o.Name) })
	}
	lines, err := sp.Plan(observers)
	fmt.Fprintln(w, head)
	for _, l := range lines {
		fmt.Fprintf(w, "  %s\n", l)
	}
	return err
}
