// Package workload defines what client sessions do, as registered
// generators: each workload names its dataset and hands the driver one
// operation per session. The driver knows nothing about particular
// workloads, and workloads know nothing about particular engines.
package workload

import (
	"context"
	"fmt"
	"sort"
	"strings"
)

// Conn is what a workload needs from one database session.
type Conn interface {
	// Prepare prepares sql once for the session; the returned statement is
	// executed many times.
	Prepare(ctx context.Context, sql string) (Stmt, error)
}

// Stmt is a prepared statement. Exec runs it and reads its whole result.
type Stmt interface {
	Exec(ctx context.Context, args ...any) error
}

// Op runs one statement of a session. The driver counts and times each call.
type Op func(ctx context.Context) error

// Workload produces the operation of each client session.
type Workload interface {
	// Worker prepares what session needs on conn and returns its operation.
	Worker(ctx context.Context, conn Conn, session int) (Op, error)
}

// Meta describes a registered workload.
type Meta struct {
	Name        string
	Description string
	// Dataset is the name of the dataset the workload reads.
	Dataset string
	// Tag is a string in the text of every statement the workload runs, so
	// that an observer's records of the workload's statements can be told
	// from those of obsbench's own statements.
	Tag string
	// Setup are statements run once after the dataset is loaded (each must
	// be safe to run again): objects the workload's statements use.
	Setup []string
	// Engines, if set, are the only engines whose SQL dialect the
	// workload's statements and set-up are written in; empty: every engine
	// (portable SQL).
	Engines []string
	// DefaultClients is the number of sessions when the user gives none.
	DefaultClients int
	New            func() Workload
}

var registry = map[string]Meta{}

// Register adds a workload; registering a name twice is a programming error.
func Register(m Meta) {
	if _, dup := registry[m.Name]; dup {
		panic("workload: duplicate registration of " + m.Name)
	}
	registry[m.Name] = m
}

// Lookup returns the workload called name.
func Lookup(name string) (Meta, error) {
	if m, ok := registry[name]; ok {
		return m, nil
	}
	return Meta{}, fmt.Errorf("unknown workload %q; known: %s", name, strings.Join(Names(), ", "))
}

// Names lists the registered workloads, sorted.
func Names() []string {
	var names []string
	for n := range registry {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// RunsOn says whether the workload's SQL runs on engine.
func (m Meta) RunsOn(engine string) bool {
	if len(m.Engines) == 0 {
		return true
	}
	for _, e := range m.Engines {
		if e == engine {
			return true
		}
	}
	return false
}
