package engine

import "github.com/obsbench/obsbench/internal/driver"

// SessionAddress is where a worker process opens a run's workload
// sessions: the server under test's dataset, as its engine's
// SessionOpener reads it. It carries the password, if any: it travels
// only to the run's own workers.
type SessionAddress struct {
	DSN string `json:"dsn"`
	// Schema is the PostgreSQL schema that holds the dataset on an
	// external server; empty elsewhere.
	Schema string `json:"schema,omitempty"`
}

// SessionServer is a Server whose workload sessions other processes can
// open, on this machine or another that reaches it.
type SessionServer interface {
	SessionAddress() SessionAddress
}

// SessionOpener is an Engine that opens workload sessions alone, for a
// worker process: no control connection, nothing changed, nothing read
// but what the workload's statements read.
type SessionOpener interface {
	Sessions(a SessionAddress) (driver.Dialer, error)
}
