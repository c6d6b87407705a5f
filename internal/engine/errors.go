package engine

import (
	"errors"
	"fmt"
	"strings"

	"github.com/obsbench/obsbench/internal/journal"
	"github.com/obsbench/obsbench/internal/observer"
)

// MissingError says an observer needs something that is not installed.
type MissingError struct {
	Observer string
	// Library is what is missing, as the engine calls it ("pgaudit",
	// "the plugin server_audit").
	Library string
	// Package is the Debian package that provides it.
	Package string
}

func (e *MissingError) Error() string {
	return fmt.Sprintf("observer %s needs %s, which is not installed: apt-get install %s", e.Observer, e.Library, e.Package)
}

// RestartError says an observer needs a restart obsbench may not do: it
// restarts only servers it manages.
type RestartError struct {
	Observer string
	Settings []string
	// Needs says, in the engine's terms, what takes the settings into
	// force and that obsbench does it only on its own servers.
	Needs string
}

func (e *RestartError) Error() string {
	return fmt.Sprintf("observer %s changes %s, which %s ", e.Observer, strings.Join(e.Settings, ", "), e.Needs)
}

// SinkError says an observer's sink cannot be provided here: obsbench
// provides slow directories and streams on the servers it manages.
type SinkError struct {
	Observer string
	Sink     observer.Sink
	// Unsupported says the engine has no analogue of the sink at all.
	Unsupported string
}

func (e *SinkError) Error() string {
	if e.Unsupported != "" {
		return fmt.Sprintf("observer %s writes to a %s, which %s has no analogue of", e.Observer, e.Sink, e.Unsupported)
	}
	return fmt.Sprintf("observer %s writes to a %s, which obsbench provides only on a server it manages ", e.Observer, e.Sink)
}

// PermissionError says the login lacks server permissions a run needs.
// A dry run still shows its plan: a DBA reviews it before granting.
type PermissionError struct {
	Missing []string
	// Why says what needs them.
	Why string
}

func (e *PermissionError) Error() string {
	return fmt.Sprintf("the login lacks the server permission(s) %s, which %s (GRANT them, or use a sysadmin login)",
		strings.Join(e.Missing, ", "), e.Why)
}

// ErrNotCollected means an observer's events cannot be counted here, e.g.
// the log directory of an external server is not on this machine.
var ErrNotCollected = errors.New("events not collected")

// Journal records each change durably before it is made, and its undoing
// after (internal/journal), so that `obsbench restore` can undo what a
// killed obsbench left.
type Journal interface {
	Record(change any) (int, error)
	Undone(seq int) error
}

// OpenJournal starts, in dir, the journal of the changes obsbench will
// make on the external server of dsn, under the name it prints (no
// password).
func OpenJournal(dir, dsn string) (*journal.Journal, error) {
	j, err := journal.Create(dir, RedactDSN(dsn))
	if err != nil {
		return nil, fmt.Errorf("%w (obsbench journals its changes to an external server; set OBSBENCH_STATE_DIR to a writable directory)", err)
	}
	return j, nil
}

// AddressError says the server's address (a DSN) is malformed or the
// server there does not answer. Nothing was started or changed; the
// caller names the option the address came from.
type AddressError struct{ Err error }

func (e *AddressError) Error() string { return "server address: " + e.Err.Error() }
func (e *AddressError) Unwrap() error { return e.Err }

// NoManagedError says an engine has no managed server: obsbench
// measures it only on an external one, at an address of the form
// DSNForm; Why says so in the engine's terms.
type NoManagedError struct {
	Engine, DSNForm, Why string
}

func (e *NoManagedError) Error() string { return e.Why }

// UnavailableError says what a run asks for is not on this machine (a
// managed server's binaries): nothing was started.
type UnavailableError struct{ Err error }

func (e *UnavailableError) Error() string { return e.Err.Error() }
func (e *UnavailableError) Unwrap() error { return e.Err }
