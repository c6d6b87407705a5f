// Package poll waits for something another process makes so: a server's
// count written as it exits, a session's thread gone, a reload in force,
// a plugin unloaded.
package poll

import (
	"context"
	"time"
)

// Until calls done every interval until it reports true or an error, or
// ctx ends. done is called at least once; once timeout has passed since
// the first call, Until returns late's error instead of waiting on.
func Until(ctx context.Context, timeout, interval time.Duration, done func() (bool, error), late func() error) error {
	deadline := time.Now().Add(timeout)
	for {
		if ok, err := done(); err != nil || ok {
			return err
		}
		if time.Now().After(deadline) {
			return late()
		}
		if err := Sleep(ctx, interval); err != nil {
			return err
		}
	}
}

// Sleep waits d, or until ctx ends (its error); a d of 0 or less does not
// wait.
func Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
