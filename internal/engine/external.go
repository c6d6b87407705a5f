package engine

import (
	"context"
	"fmt"

	"github.com/obsbench/obsbench/internal/journal"
)

// External is what every engine's external server does alike: obsbench
// never restarts it and does not read its processes (they may be on
// another machine), and closing it closes the journal of the changes
// made to it. Each engine's external server type embeds it beside its
// connection.
type External struct {
	Journal interface{ Close() error }
}

// ServerPID is 0: an external server's processes are not ours to read.
func (External) ServerPID() int { return 0 }

// Close closes the journal.
func (e External) Close() error { return e.Journal.Close() }

// OpenExternal checks that the external server of o.DSN answers ping, a
// refusal of --dsn where it does not, and opens the journal of the
// changes obsbench will make to it, in o.StateDir.
func OpenExternal(ctx context.Context, o Options, ping func(context.Context) error) (*journal.Journal, error) {
	if err := ping(ctx); err != nil {
		return nil, &AddressError{Err: fmt.Errorf("%v (%s)", err, RedactDSN(o.DSN))}
	}
	return OpenJournal(o.StateDir, o.DSN)
}
