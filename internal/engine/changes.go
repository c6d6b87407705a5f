package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
)

// Changes are the changes an applied observer made to a server, each
// journaled before it is made (when the server has a Journal) and undone
// newest first. C is the engine's record of one change: what the journal
// holds (as JSON) and what its undo reads.
type Changes[C any] struct {
	journal Journal
	list    []journaled[C]
}

type journaled[C any] struct {
	change C
	seq    int // its number in the journal; 0 when not journaled
}

// NewChanges keeps changes journaled in j (nil: none).
func NewChanges[C any](j Journal) Changes[C] { return Changes[C]{journal: j} }

// Record journals c and keeps it for Undo. It comes before the change is
// made: a crash in between leaves a journaled change that was never made,
// whose undo restores what the server still has.
func (cs *Changes[C]) Record(c C) error {
	seq := 0
	if cs.journal != nil {
		var err error
		if seq, err = cs.journal.Record(c); err != nil {
			return fmt.Errorf("journal the change before making it: %w", err)
		}
	}
	cs.list = append(cs.list, journaled[C]{change: c, seq: seq})
	return nil
}

// Keep keeps c for Undo without journaling it: a change read back from a
// journal (obsbench restore), whose entry is there already.
func (cs *Changes[C]) Keep(c C) { cs.list = append(cs.list, journaled[C]{change: c}) }

// Journaled reads changes back from a journal (JSON, oldest first) as
// Changes that Undo undoes, newest first, marking them undone in j: what
// `obsbench restore` does after obsbench was killed.
func Journaled[C any](j Journal, raw []json.RawMessage) (Changes[C], error) {
	cs := NewChanges[C](j)
	for _, r := range raw {
		var c C
		if err := json.Unmarshal(r, &c); err != nil {
			return cs, fmt.Errorf("journaled change %s: %w", r, err)
		}
		cs.Keep(c)
	}
	return cs, nil
}

// Pending are the changes not undone, oldest first.
func (cs *Changes[C]) Pending() []C {
	out := make([]C, len(cs.list))
	for i, c := range cs.list {
		out[i] = c.change
	}
	return out
}

// Len is the number of changes not undone.
func (cs *Changes[C]) Len() int { return len(cs.list) }

// Undo undoes the changes newest first with undo, going on after a
// failure: each undone change is marked so in the journal, each failed one
// stays for the next Undo. It returns the changes undone, newest first,
// and every error.
func (cs *Changes[C]) Undo(undo func(C) error) (undone []C, err error) {
	var errs []error
	var failed []journaled[C]
	for i := len(cs.list) - 1; i >= 0; i-- {
		c := cs.list[i]
		if err := undo(c.change); err != nil {
			errs = append(errs, err)
			failed = append([]journaled[C]{c}, failed...)
			continue
		}
		undone = append(undone, c.change)
		if cs.journal != nil && c.seq > 0 {
			if err := cs.journal.Undone(c.seq); err != nil {
				errs = append(errs, err)
			}
		}
	}
	cs.list = failed
	return undone, errors.Join(errs...)
}

// Sink is an applied observer's sink (a slow directory, a relay), taken
// down once the observer's revert has succeeded: last, once the server
// writes elsewhere. After a failed revert it stays, for the next attempt.
type Sink struct{ close func() error }

// Set makes close what takes the sink down.
func (s *Sink) Set(close func() error) { s.close = close }

// CloseAfter takes the sink down when *err is nil, and sets *err to how
// that failed: a revert defers it.
func (s *Sink) CloseAfter(err *error) {
	if *err == nil && s.close != nil {
		if *err = s.close(); *err == nil {
			s.close = nil
		}
	}
}

// RevertIfFailed reverts what an Apply has changed so far once it fails
// (*err not nil), the revert's own failure added to *err. Apply defers it.
func RevertIfFailed(ctx context.Context, err *error, revert func(context.Context) error) {
	if *err == nil {
		return
	}
	if rerr := revert(context.WithoutCancel(ctx)); rerr != nil {
		*err = fmt.Errorf("%w (and reverting the partial change failed: %v)", *err, rerr)
	}
}
