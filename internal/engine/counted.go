package engine

import (
	"context"

	"github.com/obsbench/obsbench/internal/driver"
	"github.com/obsbench/obsbench/internal/observer"
)

// CountedServer is a managed server whose work can run under the
// instruction counter (internal/counting, --method instructions). It is
// a CountedProcesses or a CountedThreads.
type CountedServer interface {
	Apply(ctx context.Context, o observer.Observer) (Applied, error)
	Dial(ctx context.Context) (driver.Session, error)
	// Reset restarts the server.
	Reset(ctx context.Context) error
	// CountInstructions makes the next restart run the server under the
	// counter (or without it).
	CountInstructions(on bool) error
	// ShiftStack makes the counted lifetimes started from now on begin
	// their stacks the given bytes lower (a longer environment).
	ShiftStack(bytes int)
}

// CountedProcesses serves each session in a process of its own
// (PostgreSQL's backends), and counts each process apart.
type CountedProcesses interface {
	CountedServer
	// Counts are the instructions of the processes that exited since
	// ClearCounts, by process id.
	Counts() (map[int]uint64, error)
	ClearCounts() error
	// Children are the server's processes other than its main one.
	Children() ([]int, error)
	// BackendPID is the process that serves session s.
	BackendPID(ctx context.Context, s driver.Session) (int, error)
}

// CountedThreads is one process whose sessions are threads (MariaDB):
// its count is per lifetime, the instructions spent serving client
// commands apart from the rest, and split at each end of a client
// connection.
type CountedThreads interface {
	CountedServer
	// LastTally is the count of the lifetime the latest Reset ended: the
	// commands served up to each connection's end since the one before
	// (the last entry: after the last end), and the rest.
	LastTally() (connections []uint64, rest uint64, err error)
	// EndedConnections is how many connections of the running lifetime
	// have ended and been counted.
	EndedConnections() (int, error)
	// ServerPID is the server's process.
	ServerPID() int
}

// StatementSplitter is a CountedProcesses that can count each statement of
// a session apart (PostgreSQL under callgrind).
type StatementSplitter interface {
	CountedProcesses
	// SplitStatements makes the counted lifetimes started from now on
	// split each process's count at every statement's start.
	SplitStatements(on bool)
	// StatementCounts are a counted process's parts, read by Counts: up
	// to its first statement, each statement's, and the last from the
	// last statement's start to the process's exit.
	StatementCounts(pid int) []uint64
}
