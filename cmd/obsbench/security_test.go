package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/obsbench/obsbench/internal/engine/mariadb"
	"github.com/obsbench/obsbench/internal/engine/postgres"
	"github.com/obsbench/obsbench/internal/engine/servertest"
	"github.com/obsbench/obsbench/internal/server"
	"github.com/obsbench/obsbench/internal/slowfs"
)

// While managed servers run (PostgreSQL with a synchronous standby behind
// the relay, MariaDB with a semi-synchronous replica behind the relay,
// each with a slow directory mounted), another account on the machine
// (nobody) tries to get in: TCP and socket connections as every user each
// server has, with no password and with the empty password; reading and
// writing through the slow mounts; reading a results directory and a
// capture file that obsbench wrote. Every attempt must be refused. The
// temporary directory is open to everyone (0755), as a home directory or
// /tmp is, so that only what obsbench does keeps the outsider out. No
// password of the managed servers appears in what obsbench printed or
// wrote, or in the servers' logs.
func TestOtherAccountsKeptOut(t *testing.T) {
	needServers(t)
	tmp := privateTemp(t)
	t.Setenv("OBSBENCH_STATE_DIR", filepath.Join(tmp, "state"))
	ctx := context.Background()

	pg := servertest.PostgresWith(t, map[string]string{"logging_collector": "on"})
	standby, err := pg.StartStandby(ctx, server.CompanionOptions{Sync: true, Delay: time.Millisecond, Log: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { standby.Stop() })
	m := servertest.MariaDB(t, nil)
	replica, err := m.StartReplica(ctx, server.CompanionOptions{Sync: true, Delay: time.Millisecond, Log: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { replica.Stop() })
	for _, s := range []interface {
		SinkDir() string
		MountSlowDir(context.Context, slowfs.Device) (func() error, error)
	}{pg, m} {
		if _, err := s.MountSlowDir(ctx, slowfs.Device{}); err != nil {
			t.Fatal(err)
		}
		// What a server's sink holds: statements, owner-only.
		if err := os.WriteFile(filepath.Join(s.SinkDir(), "trail.log"), []byte("SELECT 1\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}

	// What obsbench writes: a run's results (against the managed
	// PostgreSQL as an external server, so that obsbench reads its
	// password from the server's password file) and a capture.
	out := filepath.Join(tmp, "results")
	var stdout, stderr bytes.Buffer
	if code := run(ctx, []string{"run", "--dsn", pg.DSN("postgres"), "--allow-changes", "--method", "rounds", "--rounds", "2",
		"--duration", "1s", "--warmup", "300ms", "--clients", "2", "--observers", "log-statements-file", "--out", out}, &stdout, &stderr); code != 0 {
		t.Fatalf("run: exit %d: %s", code, stderr.String())
	}
	capFile := filepath.Join(tmp, "prod.obsc")
	if code := run(ctx, []string{"capture", "--out", capFile, filepath.Join(captureLogs, "postgresql-1.csv")}, &stdout, &stderr); code != 0 {
		t.Fatalf("capture: exit %d: %s", code, stderr.String())
	}

	var cmds []servertest.Command
	for _, s := range []struct {
		name      string
		port      int
		socketDir string
	}{{"postgres", pg.Port(), pg.SocketDir()}, {"standby", standby.Port(), standby.SocketDir()}} {
		for _, role := range pgRoles(t, pg) {
			for _, c := range []struct{ how, conn string }{
				{"TCP, no password", "host=127.0.0.1"},
				// libpq sends no empty password: it asks the server the same as without one.
				{"TCP, empty password", "host=127.0.0.1 password=''"},
				{"socket, no password", "host=" + s.socketDir},
			} {
				conn := c.conn + " port=" + strconv.Itoa(s.port) + " user=" + role + " dbname=postgres connect_timeout=5"
				cmds = append(cmds, outsider(s.name+" as "+role+" ("+c.how+")", "psql", "-X", "-w", "-At", "-c", "SELECT 1", conn))
			}
		}
	}
	mariaUsers := append(mariaDBUsers(t, m), "", "obsbench_repl")
	for _, s := range []struct {
		name string
		m    *mariadb.Instance
	}{{"mariadb", m}, {"replica", replica.Instance}} {
		for _, user := range mariaUsers {
			tcp := []string{"--no-defaults", "--connect-timeout=5", "-h", "127.0.0.1", "-P", strconv.Itoa(s.m.Port()), "-u", user, "-e", "SELECT 1"}
			sock := []string{"--no-defaults", "--connect-timeout=5", "--socket=" + s.m.Socket(), "-u", user, "-e", "SELECT 1"}
			cmds = append(cmds,
				outsider(s.name+" as '"+user+"' (TCP, no password)", "mariadb", tcp...),
				outsider(s.name+" as '"+user+"' (TCP, empty password)", "mariadb", append([]string{"--no-defaults", "--password="}, tcp[1:]...)...),
				outsider(s.name+" as '"+user+"' (socket, no password)", "mariadb", sock...),
			)
		}
		// The replication account's password was once fixed and public.
		cmds = append(cmds, outsider(s.name+" as obsbench_repl with the old fixed password", "mariadb",
			"--no-defaults", "--connect-timeout=5", "-h", "127.0.0.1", "-P", strconv.Itoa(s.m.Port()), "-u", "obsbench_repl", "--password=obsbench_repl", "-e", "SELECT 1"))
	}
	for _, dir := range []string{pg.SinkDir(), m.SinkDir()} {
		cmds = append(cmds,
			outsider("listing the slow mount "+dir, "ls", dir),
			outsider("reading through the slow mount", "cat", filepath.Join(dir, "trail.log")),
			outsider("writing through the slow mount", "sh", "-c", "echo x >> "+filepath.Join(dir, "trail.log")),
			outsider("creating a file through the slow mount", "sh", "-c", "echo x > "+filepath.Join(dir, "new.log")),
		)
	}
	cmds = append(cmds,
		outsider("listing the results directory", "ls", out),
		outsider("reading summary.json", "cat", filepath.Join(out, "summary.json")),
		outsider("reading results.jsonl", "cat", filepath.Join(out, "results.jsonl")),
		outsider("reading the capture file", "cat", capFile),
	)
	servertest.MustBeRefused(t, refusals, servertest.AsOutsiderAll(t, cmds)...)

	// Owner-only modes on everything obsbench wrote, whatever the umask:
	// a group the outsider is not in could still read a 0640 file.
	for _, root := range []string{out, capFile} {
		filepath.Walk(root, func(p string, info os.FileInfo, err error) error {
			if err == nil && info.Mode().Perm()&0o077 != 0 {
				t.Errorf("%s has mode %v; want owner-only", p, info.Mode().Perm())
			}
			return nil
		})
	}

	passwords := []string{pgPassword(t, pg), m.Password()}
	logs := []string{pg.ServerLog(), standby.ServerLog(), m.ErrorLog(), replica.ErrorLog()}
	serverLogs, _ := filepath.Glob(filepath.Join(pg.DataDir(), "log", "*"))
	assertNoSecrets(t, passwords, stdout.String()+stderr.String(), append(logs, serverLogs...), out, capFile, filepath.Join(tmp, "state"))
}

// refusals are the ways a server, the kernel or a file system says no.
var refusals = []string{
	"Permission denied",              // files, directories, a socket's directory
	"no password supplied",           // libpq, asked for a password it has none of
	"password authentication failed", // PostgreSQL
	"Access denied for user",         // MariaDB: wrong or no password, a locked account
	"is not allowed to connect",      // MariaDB: no account for the client's host
	"' (13)",                         // MariaDB's client on a socket it may not reach: errno 13, EACCES
}

// outsider is a command for servertest.AsOutsiderAll.
func outsider(what, name string, args ...string) servertest.Command {
	return servertest.Command{What: what, Name: name, Args: args}
}

// pgRoles is every role of a managed server.
func pgRoles(t *testing.T, pg *postgres.Instance) []string {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, pg.DSN("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	rows, _ := conn.Query(ctx, "SELECT rolname FROM pg_roles ORDER BY 1")
	roles, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil || len(roles) < 2 {
		t.Fatalf("roles %v, %v", roles, err)
	}
	return roles
}

// mariaDBUsers is every account name of a managed server.
func mariaDBUsers(t *testing.T, m *mariadb.Instance) []string {
	t.Helper()
	rows, err := servertest.OpenMariaDB(t, m, "").Query("SELECT DISTINCT User FROM mysql.global_priv ORDER BY 1")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var users []string
	for rows.Next() {
		var u string
		if err := rows.Scan(&u); err != nil {
			t.Fatal(err)
		}
		users = append(users, u)
	}
	if len(users) == 0 {
		t.Fatal("no accounts")
	}
	return users
}

// pgPassword is the managed server's password, from its password file.
func pgPassword(t *testing.T, pg *postgres.Instance) string {
	t.Helper()
	b, err := os.ReadFile(pg.PassFile())
	if err != nil {
		t.Fatal(err)
	}
	line := strings.TrimSpace(string(b))
	pw := line[strings.LastIndex(line, ":")+1:]
	if len(pw) < 16 {
		t.Fatalf("password file line %q; want a long random password", line)
	}
	return pw
}

// assertNoSecrets fails if a password is in the output or in any file
// named or under a directory named.
func assertNoSecrets(t *testing.T, passwords []string, output string, files []string, dirs ...string) {
	t.Helper()
	check := func(where string, b []byte) {
		for _, pw := range passwords {
			if pw != "" && bytes.Contains(b, []byte(pw)) {
				t.Errorf("a password appears in %s", where)
			}
		}
	}
	check("obsbench's output", []byte(output))
	for _, f := range files {
		if b, err := os.ReadFile(f); err == nil {
			check(f, b)
		} else {
			t.Errorf("read %s: %v", f, err)
		}
	}
	for _, dir := range dirs {
		filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
			if err == nil && info.Mode().IsRegular() {
				if b, err := os.ReadFile(p); err == nil {
					check(p, b)
				}
			}
			return nil
		})
	}
}
