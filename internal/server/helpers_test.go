package server_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/obsbench/obsbench/internal/server"
	"github.com/obsbench/obsbench/internal/server/servertest"
)

// within is a context for a test's server operations: it ends after d,
// or once the test and its cleanups are over.
func within(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// startPostgres starts a managed PostgreSQL for a test that stops it
// itself, or has it removed, and gives the start and the test's work on
// the server d: what is left of it is stopped when the test ends, the
// error not checked.
func startPostgres(t *testing.T, d time.Duration) (context.Context, *server.Postgres) {
	t.Helper()
	return startOwn(t, d, "StartPostgres", func(ctx context.Context) (*server.Postgres, error) {
		return server.StartPostgres(ctx, server.PostgresOptions{Log: t.Logf, Getenv: os.Getenv})
	})
}

// startMariaDB is startPostgres for a managed MariaDB.
func startMariaDB(t *testing.T, d time.Duration) (context.Context, *server.MariaDB) {
	t.Helper()
	return startOwn(t, d, "StartMariaDB", func(ctx context.Context) (*server.MariaDB, error) {
		return server.StartMariaDB(ctx, server.MariaDBOptions{Log: t.Logf, Getenv: os.Getenv})
	})
}

// startOwn starts a server with start, given d for it and the test's
// work on it, and has it stopped when the test ends (see started).
func startOwn[S stopper](t *testing.T, d time.Duration, what string, start func(context.Context) (S, error)) (context.Context, S) {
	t.Helper()
	servertest.SkipShort(t)
	ctx := within(t, d)
	s, err := start(ctx)
	return ctx, started(t, what, s, err)
}

// stopper is a managed server, copy or companion.
type stopper interface{ Stop() error }

// started is what a Start method returned: s, stopped when the test ends
// (again, if the test stopped it, which does nothing), or the test fails
// with err, saying what it started.
func started[S stopper](t *testing.T, what string, s S, err error) S {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	t.Cleanup(func() { s.Stop() })
	return s
}

// stopRemoves stops s, which must leave nothing of dir behind.
func stopRemoves(t *testing.T, s stopper, dir string) {
	t.Helper()
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("%s left after Stop (%v)", dir, err)
	}
}

// syncCommit is a synchronous companion's test: a commit made while pause
// holds the companion back waits for it, as the one session waiting, and
// completes once resume lets the companion go on.
type syncCommit struct {
	pause, resume func() error
	commit        func() error
	// waiting counts the sessions that wait for the companion.
	waiting func() (int, error)
	// For the messages: what pause did, what the waiting sessions wait
	// for, and what resume did; detail, if set, adds to a commit that
	// did not wait.
	paused, waitsFor, resumed string
	detail                    func() string
}

// check runs the test. The companion is resumed in the end, whatever
// fails.
func (c syncCommit) check(t *testing.T) {
	t.Helper()
	if err := c.pause(); err != nil {
		t.Fatal(err)
	}
	paused := true
	defer func() {
		if paused {
			c.resume()
		}
	}()
	done := make(chan error, 1)
	go func() { done <- c.commit() }()
	select {
	case err := <-done:
		detail := ""
		if c.detail != nil {
			detail = c.detail()
		}
		t.Fatalf("the commit completed (err %v) while %s%s", err, c.paused, detail)
	case <-time.After(2 * time.Second):
	}
	waiting, err := c.waiting()
	if err != nil {
		t.Fatal(err)
	}
	if waiting != 1 {
		t.Errorf("%d sessions wait %s; want the blocked commit", waiting, c.waitsFor)
	}
	if err := c.resume(); err != nil {
		t.Fatal(err)
	}
	paused = false
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("commit after %s: %v", c.resumed, err)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("the commit did not complete within 30s after %s", c.resumed)
	}
}

// restartPrimary restarts a primary, then waits for its companion to
// stream from it again.
func restartPrimary(ctx context.Context, t *testing.T, primary interface {
	Restart(context.Context) error
}, companion interface{ WaitStreaming(context.Context) error }) {
	t.Helper()
	if err := primary.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	if err := companion.WaitStreaming(ctx); err != nil {
		t.Fatal(err)
	}
}
