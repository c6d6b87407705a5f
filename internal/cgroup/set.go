package cgroup

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"github.com/obsbench/obsbench/internal/journal"
)

// Engine is what a journaled group's record names as its "engine":
// `obsbench restore` undoes such records with Undo instead of a database
// engine.
const Engine = "cgroup"

// change is a journal record of a group obsbench made: its directory in
// each hierarchy.
type change struct {
	Engine string   `json:"engine"`
	Dirs   []string `json:"dirs"`
}

// Set is the groups of one experiment, each journaled before it is made
// and removed by Close (or, after obsbench was killed, by restore).
type Set struct {
	j      *journal.Journal
	groups []*Group
	seqs   []int
}

// NewSet opens the journal of a set of groups in dir (journal.Dirs
// unless testing).
func NewSet(dir string) (*Set, error) {
	j, err := journal.Create(dir, fmt.Sprintf("cgroups of obsbench %d", os.Getpid()))
	if err != nil {
		return nil, err
	}
	return &Set{j: j}, nil
}

// Create journals group name, then makes it with a quota of cpus CPUs.
func (s *Set) Create(h Hierarchy, name string, cpus float64) (*Group, error) {
	seq, err := s.j.Record(change{Engine: Engine, Dirs: Paths(h, name)})
	if err != nil {
		return nil, err
	}
	g, err := Create(h, name, cpus)
	if err != nil {
		// Nothing was left: the record is undone.
		return nil, errors.Join(err, s.j.Undone(seq))
	}
	s.groups, s.seqs = append(s.groups, g), append(s.seqs, seq)
	return g, nil
}

// Close removes every group of the set and closes its journal, which is
// kept (for restore) if a group could not be removed.
func (s *Set) Close() error {
	var errs []error
	for i, g := range s.groups {
		if err := g.Remove(); err != nil {
			errs = append(errs, err)
			continue
		}
		errs = append(errs, s.j.Undone(s.seqs[i]))
	}
	s.groups, s.seqs = nil, nil
	return errors.Join(append(errs, s.j.Close())...)
}

// Undo removes the groups of journaled records (obsbench restore).
func Undo(changes []json.RawMessage) error {
	for _, raw := range changes {
		var c change
		if err := json.Unmarshal(raw, &c); err != nil {
			return fmt.Errorf("cgroup record: %w", err)
		}
		if c.Engine != Engine {
			return fmt.Errorf("cgroup record of engine %q", c.Engine)
		}
		for _, dir := range c.Dirs {
			if err := Remove(dir); err != nil {
				return err
			}
		}
	}
	return nil
}
