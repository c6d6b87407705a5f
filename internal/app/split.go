package app

import (
	"errors"
	"fmt"
	"strings"

	"github.com/obsbench/obsbench/internal/engine"
	"github.com/obsbench/obsbench/internal/experiment"
	"github.com/obsbench/obsbench/internal/observer"
	"github.com/obsbench/obsbench/internal/result"
)

// sessionSplitter is the engine of a split: the one that knows which of
// an observer's settings a session sets for itself.
func (c Experiment) sessionSplitter() (engine.SessionSplitter, error) {
	e, err := engine.Lookup(c.Engine)
	if err != nil {
		return nil, err
	}
	ss, ok := e.(engine.SessionSplitter)
	if _, sessions := e.(engine.SessionOpener); !ok || !sessions {
		return nil, usagef("--method split: the %s engine cannot split its observers between groups of sessions yet", c.Engine)
	}
	return ss, nil
}

// checkSplit refuses, before anything starts, a split that cannot run:
// sessions that make no two equal groups, collectors that would see both
// groups as one, and every observer that has no per-session part, each
// named with its reason.
func (c Experiment) checkSplit() error {
	if c.Method != result.MethodSplit {
		return nil
	}
	ss, err := c.sessionSplitter()
	if err != nil {
		return err
	}
	switch {
	case c.Clients < 2 || c.Clients%2 != 0:
		return usagef("--method split: the workload's %d session(s) make no two equal groups; give --clients, an even number of at least 2", c.Clients)
	case c.Waits > 0:
		return usagef("--waits with --method split: the sampler would see both groups of sessions as one; not yet with a split")
	}
	var errs []string
	for _, o := range c.observers {
		if o.Name == observer.Baseline {
			continue
		}
		if _, err := ss.SplitSessions(o); err != nil {
			errs = append(errs, err.Error())
		}
	}
	if len(errs) > 0 {
		return usagef("--method split: %s; leave it out, or measure it by --method duet or auto, which measure an observer whole", strings.Join(errs, "; "))
	}
	return nil
}

// splitOf is what a split needs beside its server: the engine's division
// of each observer. Its two groups are the run's sessions taken in turn,
// driven in this process like any run on one server.
func splitOf(c Experiment, logf func(string, ...any)) (*experiment.Split, error) {
	ss, err := c.sessionSplitter()
	if err != nil {
		return nil, err
	}
	logf("split: groups a and b of %d sessions each on the one server, sessions of both on every driver thread", c.Clients/2)
	// A managed server's backends are processes on this machine, whose
	// CPU each session reads; an external one's are not.
	return &experiment.Split{Divide: ss.SplitSessions, SQL: ss.SessionSQL, ServerCPU: c.DSN == ""}, nil
}

// planSplit lists, for a dry run, what each observer's split sets: on
// the server for both groups, and in each session of the observed group.
func (c Experiment) planSplit() ([]string, error) {
	ss, err := c.sessionSplitter()
	if err != nil {
		return nil, err
	}
	var lines []string
	var errs []error
	for _, o := range c.observers {
		if o.Name == observer.Baseline {
			continue
		}
		part, err := ss.SplitSessions(o)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		lines = append(lines, fmt.Sprintf("%s, in each session of the observed group:", o.Name))
		for _, sql := range ss.SessionSQL(part.Session) {
			lines = append(lines, "  "+sql)
		}
		if shared := part.SharedWork(); len(shared) > 0 {
			lines = append(lines, fmt.Sprintf("  on the server, for both groups (not in the figure): %s", strings.Join(shared, ", ")))
		}
	}
	return lines, errors.Join(errs...)
}
