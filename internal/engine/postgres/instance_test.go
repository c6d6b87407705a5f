package postgres_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/obsbench/obsbench/internal/engine/postgres"
	"github.com/obsbench/obsbench/internal/engine/servertest"
	"github.com/obsbench/obsbench/internal/server"
)

func TestStartRestartStop(t *testing.T) {
	ctx, pg := servertest.StartPostgres(t, 2*time.Minute)
	base := pg.SocketDir()

	// Reachable on the unix socket and on loopback TCP, as a superuser,
	// with the password in the server's password file.
	for _, dsn := range []string{
		pg.DSN("postgres"),
		"host=127.0.0.1 port=" + strconv.Itoa(pg.Port()) + " user=postgres dbname=postgres sslmode=disable passfile=" + pg.PassFile(),
	} {
		conn, err := pgx.Connect(ctx, dsn)
		if err != nil {
			t.Fatalf("connect %q: %v", dsn, err)
		}
		var listen, buffers string
		if err := conn.QueryRow(ctx, "SELECT current_setting('listen_addresses'), current_setting('shared_buffers')").Scan(&listen, &buffers); err != nil {
			t.Fatal(err)
		}
		conn.Close(ctx)
		if listen != "127.0.0.1" || buffers != "256MB" {
			t.Errorf("listen_addresses, shared_buffers = %q, %q; want 127.0.0.1, 256MB", listen, buffers)
		}
	}

	pid, err := pg.PID()
	if err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() == 0 && servertest.ProcessUID(t, pid) == "0" {
		t.Errorf("postgres %d runs as root", pid)
	}

	if err := pg.Restart(ctx); err != nil {
		t.Fatalf("Restart: %v", err)
	}
	pid2, err := pg.PID()
	if err != nil || pid2 == pid {
		t.Errorf("PID after restart = %d, %v; want a new postmaster (was %d)", pid2, err, pid)
	}

	if err := pg.Stop(); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if _, err := os.Stat(base); !os.IsNotExist(err) {
		t.Errorf("server directory %s still exists after Stop (err %v)", base, err)
	}
	if waitGone(pid2) {
		t.Errorf("postmaster %d still running after Stop", pid2)
	}
	if err := pg.Stop(); err != nil {
		t.Errorf("second Stop: %v", err)
	}
}

// A server whose obsbench was killed is stopped and removed by the next
// start.
func TestReapStale(t *testing.T) {
	_, pg := servertest.StartPostgres(t, 2*time.Minute)
	pid, _ := pg.PID()
	// Pretend the owner died: a process that has exited.
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	owner := filepath.Join(pg.SocketDir(), "owner.pid")
	if err := os.WriteFile(owner, []byte(strconv.Itoa(dead.Process.Pid)), 0o644); err != nil {
		t.Fatal(err)
	}
	server.ReapStale(t.Logf)
	if _, err := os.Stat(pg.SocketDir()); !os.IsNotExist(err) {
		t.Errorf("stale server directory still exists (err %v)", err)
	}
	if waitGone(pid) {
		t.Errorf("stale postmaster %d still running", pid)
	}
}

func TestFindPostgresBin(t *testing.T) {
	servertest.SkipShort(t)
	dir, err := postgres.FindBin()
	if err != nil {
		t.Fatalf("FindPostgresBin: %v", err)
	}
	for _, b := range []string{"initdb", "pg_ctl", "postgres"} {
		if _, err := os.Stat(filepath.Join(dir, b)); err != nil {
			t.Errorf("%s: %v", b, err)
		}
	}
}

// waitGone waits up to 5 s for pid to exit and reports whether it is still
// running: pg_ctl stop returns when postmaster.pid is removed, which the
// postmaster does just before it exits.
func waitGone(pid int) bool {
	for i := 0; i < 50 && server.Alive(pid); i++ {
		time.Sleep(100 * time.Millisecond)
	}
	return server.Alive(pid)
}

// With TemplateEnv's directory given, the first server's cluster is kept as a template
// and the next server starts from a copy of it, with a password of its
// own: the first server's password does not open the second.
func TestStartFromTemplate(t *testing.T) {
	servertest.SkipShort(t)
	dir := t.TempDir()
	ctx := servertest.Within(t, 2*time.Minute)
	start := func() (*postgres.Instance, string) {
		t.Helper()
		var log strings.Builder
		pg, err := postgres.Start(ctx, postgres.InstanceOptions{Log: func(f string, a ...any) { fmt.Fprintf(&log, f+"\n", a...) },
			Getenv: func(name string) string { return map[string]string{postgres.TemplateEnv: dir}[name] }})
		if err != nil {
			t.Fatalf("StartPostgres: %v", err)
		}
		t.Cleanup(func() { pg.Stop() })
		return pg, log.String()
	}
	first, log := start()
	if !strings.Contains(log, "initdb ") {
		t.Errorf("the first server's log does not say it ran initdb:\n%s", log)
	}
	entries, err := os.ReadDir(dir)
	if err != nil || len(entries) != 1 || !strings.HasPrefix(entries[0].Name(), "pg-") {
		t.Fatalf("template directory holds %v (%v); want one template", entries, err)
	}
	if st, err := os.Stat(filepath.Join(dir, entries[0].Name())); err != nil || st.Mode().Perm()&0o077 != 0 {
		t.Errorf("template mode %v (%v); want no access for others", st.Mode(), err)
	}
	second, log := start()
	if !strings.Contains(log, "copying the initdb template") || strings.Contains(log, "initdb "+second.DataDir()) {
		t.Errorf("the second server's log does not say it was copied from the template:\n%s", log)
	}
	conn, err := pgx.Connect(ctx, second.DSN("postgres"))
	if err != nil {
		t.Fatalf("the copy with its own password: %v", err)
	}
	conn.Close(ctx)
	alien := fmt.Sprintf("host=%s port=%d user=postgres dbname=postgres sslmode=disable passfile=%s", second.SocketDir(), second.Port(), first.PassFile())
	if conn, err := pgx.Connect(ctx, alien); err == nil {
		conn.Close(ctx)
		t.Errorf("the first server's password opens the copy")
	} else if !strings.Contains(err.Error(), "password authentication failed") {
		t.Errorf("the first server's password on the copy: %v; want a failed password authentication", err)
	}
}

// A TMPDIR too long for the server's unix socket is refused before any
// server is made, saying what to change, and leaves nothing behind.
func TestTempDirTooLongForSocket(t *testing.T) {
	servertest.SkipShort(t)
	long := filepath.Join(t.TempDir(), strings.Repeat("d", 100))
	if err := os.Mkdir(long, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TMPDIR", long)
	pg, err := postgres.Start(context.Background(), postgres.InstanceOptions{Getenv: os.Getenv})
	if err == nil {
		pg.Stop()
		t.Fatal("StartPostgres in a TMPDIR too long for a socket succeeded")
	}
	if !strings.Contains(err.Error(), "set TMPDIR to a shorter directory") || !strings.Contains(err.Error(), "over the 107") {
		t.Errorf("error = %v; want the socket's length and what to change", err)
	}
	if left, _ := os.ReadDir(long); len(left) > 0 {
		t.Errorf("left in TMPDIR: %v", left)
	}
}
