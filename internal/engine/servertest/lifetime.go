package servertest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/obsbench/obsbench/internal/engine/mariadb"
	"github.com/obsbench/obsbench/internal/engine/postgres"
)

// Within is a context for a test's server operations: it ends after d,
// or once the test and its cleanups are over.
func Within(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// StartPostgres starts a managed PostgreSQL for a test that stops it
// itself, or has it removed, and gives the start and the test's work on
// the server d: what is left of it is stopped when the test ends, the
// error not checked.
func StartPostgres(t testing.TB, d time.Duration) (context.Context, *postgres.Instance) {
	t.Helper()
	return startOwn(t, d, "postgres.Start", func(ctx context.Context) (*postgres.Instance, error) {
		return postgres.Start(ctx, postgres.InstanceOptions{Log: t.Logf, Getenv: os.Getenv})
	})
}

// StartMariaDB is StartPostgres for a managed MariaDB.
func StartMariaDB(t testing.TB, d time.Duration) (context.Context, *mariadb.Instance) {
	t.Helper()
	return startOwn(t, d, "mariadb.Start", func(ctx context.Context) (*mariadb.Instance, error) {
		return mariadb.Start(ctx, mariadb.InstanceOptions{Log: t.Logf, Getenv: os.Getenv})
	})
}

// startOwn starts a server with start, given d for it and the test's
// work on it, and has it stopped when the test ends (see Started).
func startOwn[S stopper](t testing.TB, d time.Duration, what string, start func(context.Context) (S, error)) (context.Context, S) {
	t.Helper()
	SkipShort(t)
	ctx := Within(t, d)
	s, err := start(ctx)
	return ctx, Started(t, what, s, err)
}

// stopper is a managed server, copy or companion.
type stopper interface{ Stop() error }

// Started is what a Start method returned: s, stopped when the test ends
// (again, if the test stopped it, which does nothing), or the test fails
// with err, saying what it started.
func Started[S stopper](t testing.TB, what string, s S, err error) S {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	t.Cleanup(func() { s.Stop() })
	return s
}

// StopRemoves stops s, which must leave nothing of dir behind.
func StopRemoves(t testing.TB, s stopper, dir string) {
	t.Helper()
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("%s left after Stop (%v)", dir, err)
	}
}

// SyncCommit is a synchronous companion's test: a commit made while pause
// holds the companion back waits for it, as the one session waiting, and
// completes once resume lets the companion go on.
type SyncCommit struct {
	Pause, Resume func() error
	Commit        func() error
	// waiting counts the sessions that wait for the companion.
	Waiting func() (int, error)
	// For the messages: what pause did, what the waiting sessions wait
	// for, and what resume did; detail, if set, adds to a commit that
	// did not wait.
	Paused, WaitsFor, Resumed string
	Detail                    func() string
}

// Check runs the test. The companion is resumed in the end, whatever
// fails.
func (c SyncCommit) Check(t testing.TB) {
	t.Helper()
	if err := c.Pause(); err != nil {
		t.Fatal(err)
	}
	paused := true
	defer func() {
		if paused {
			c.Resume()
		}
	}()
	done := make(chan error, 1)
	go func() { done <- c.Commit() }()
	select {
	case err := <-done:
		detail := ""
		if c.Detail != nil {
			detail = c.Detail()
		}
		t.Fatalf("the commit completed (err %v) while %s%s", err, c.Paused, detail)
	case <-time.After(2 * time.Second):
	}
	waiting, err := c.Waiting()
	if err != nil {
		t.Fatal(err)
	}
	if waiting != 1 {
		t.Errorf("%d sessions wait %s; want the blocked commit", waiting, c.WaitsFor)
	}
	if err := c.Resume(); err != nil {
		t.Fatal(err)
	}
	paused = false
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("commit after %s: %v", c.Resumed, err)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("the commit did not complete Within 30s after %s", c.Resumed)
	}
}

// RestartPrimary restarts a primary, then waits for its companion to
// stream from it again.
func RestartPrimary(ctx context.Context, t testing.TB, primary interface {
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

// StackShifted checks that process pid runs with its stack shifted by
// bytes: an environment that much longer.
func StackShifted(t testing.TB, pid, bytes int) {
	t.Helper()
	environ, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
	if want := "\x00OBSBENCH_STACK_SHIFT=" + strings.Repeat("x", bytes) + "\x00"; err != nil || !strings.Contains("\x00"+string(environ), want) {
		t.Errorf("the environment of process %d (%v) has no OBSBENCH_STACK_SHIFT of %d bytes", pid, err, bytes)
	}
}

// ProcessUID is the real user id of process pid.
func ProcessUID(t testing.TB, pid int) string {
	t.Helper()
	st, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "status"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(st), "\n") {
		if strings.HasPrefix(line, "Uid:") {
			return strings.Fields(line)[1]
		}
	}
	t.Fatalf("no Uid in /proc/%d/status", pid)
	return ""
}
