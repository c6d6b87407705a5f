package engine

import (
	"context"

	"github.com/obsbench/obsbench/internal/dataset"
	"github.com/obsbench/obsbench/internal/driver"
	"github.com/obsbench/obsbench/internal/observer"
)

// Target is the server under test, as the experiment uses it.
type Target interface {
	// Check fails when o cannot be applied here (not installed, needs a
	// restart obsbench may not do), before anything is changed.
	Check(ctx context.Context, o observer.Observer) error
	Apply(ctx context.Context, o observer.Observer) (Applied, error)
	// Settings returns every server setting, name to value.
	Settings(ctx context.Context) (map[string]string, error)
	Verify(ctx context.Context, d dataset.Dataset) error
	Dial(ctx context.Context) (driver.Session, error)
	// ServerPID is the server's main process on this machine, 0 if none.
	ServerPID() int
	// Split divides o into the part that needs a restart (held) and the
	// part a reload switches (switched, which keeps o's event counter).
	Split(ctx context.Context, o observer.Observer) (held, switched observer.Observer, err error)
}

// Applied is an observer in force.
type Applied interface {
	// StartEvents starts counting events for statements carrying tag; nil
	// when the observer records none.
	StartEvents(ctx context.Context, tag string) (EventCounter, error)
	Revert(ctx context.Context) error
}

// Resetter is a Target that can bring the server to the same state before
// every run. A managed server restarts: observers that need a restart
// would otherwise always run on a freshly started server and the others on
// a warm one, and that difference would be counted as their overhead.
type Resetter interface {
	Reset(ctx context.Context) error
}

// ApplyRestarter is a Resetter whose Apply restarts the server for some
// observers (a library preloaded): the server is then as freshly started
// as after Reset, so the Reset before that Apply is left out. Each twin
// of a duet, and each run in rounds, starts from one restart either way.
type ApplyRestarter interface {
	// ApplyRestarts says whether Apply(o) restarts the server before it
	// changes anything a session sees.
	ApplyRestarts(ctx context.Context, o observer.Observer) (bool, error)
}

// FaultReporter is a Target that hears the server complain about faults
// the workload does not see, such as a log device that is full: the
// server goes on and drops log lines.
type FaultReporter interface {
	// ServerFaults returns how many such complaints there were so far,
	// and the latest.
	ServerFaults() (int64, string)
}

// Companioned is a target whose system under test has more server
// processes than its own tree: a managed standby. Their CPU counts as the
// server's.
type Companioned interface {
	CompanionPIDs() []int
}
