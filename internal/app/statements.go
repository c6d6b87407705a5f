package app

import (
	"context"
	"errors"

	"github.com/obsbench/obsbench/internal/engine"
	"github.com/obsbench/obsbench/internal/pgbench"
	"github.com/obsbench/obsbench/internal/workload"
)

// checkStatements has the server parse the statements of a workload that
// can be checked (workload.Checker), on one session, before the
// experiment's first run: a statement that cannot run in the query mode
// is refused with exit 2 and the mode that avoids it, nothing measured.
func checkStatements(ctx context.Context, target engine.Server, wl workload.Meta) error {
	if wl.New == nil {
		return nil
	}
	ch, ok := wl.New().(workload.Checker)
	if !ok {
		return nil
	}
	sess, err := target.Dial(ctx)
	if err != nil {
		return err
	}
	defer sess.Close(ctx)
	err = ch.Check(ctx, sess)
	var me *pgbench.ModeError
	if errors.As(err, &me) {
		return usageError{Err: err}
	}
	return err
}
