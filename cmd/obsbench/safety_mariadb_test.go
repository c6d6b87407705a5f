package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/obsbench/obsbench/internal/engine/mariadb"
	"github.com/obsbench/obsbench/internal/engine/servertest"
	"github.com/obsbench/obsbench/internal/journal"
)

// externalMariaDB starts a MariaDB the way a user's would be: obsbench
// does not manage it, and connects as a user with a password and every
// privilege.
func externalMariaDB(t *testing.T) (dsn string, settings func() map[string]string) {
	t.Helper()
	m := servertest.MariaDB(t, nil)
	db := servertest.OpenMariaDB(t, m, "")
	for _, st := range []string{
		"CREATE USER 'obs'@'localhost' IDENTIFIED BY '" + secret + "'",
		"GRANT ALL PRIVILEGES ON *.* TO 'obs'@'localhost'",
	} {
		if _, err := db.Exec(st); err != nil {
			t.Fatal(err)
		}
	}
	dsn = "obs:" + secret + "@unix(" + m.Socket() + ")/"
	srv, err := mariadb.New(dsn, mariadb.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return dsn, func() map[string]string {
		s, err := srv.Settings(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
}

// obsbench killed with SIGKILL while a plugin and global variables are
// changed on an external MariaDB: `obsbench restore` uninstalls the plugin
// and sets every variable back, so that the whole list is as before.
func TestMariaDBKillThenRestore(t *testing.T) {
	needServers(t)
	tmp, state := privateState(t)
	dsn, settings := externalMariaDB(t)
	before := settings()

	cmd, out := startObsbench(t, state, "run", "--engine", "mariadb", "--dsn", dsn, "--allow-changes",
		"--observers", "server-audit-file,general-log-file", "--method", "rounds", "--rounds", "3",
		"--duration", "3s", "--warmup", "300ms", "--clients", "2", "--out", filepath.Join(tmp, "out"))
	path := killWhenChanged(t, state, cmd, out, before, settings)

	// The journal has no password: restore is given the DSN.
	stdout, stderr := runOK(t, "restore", "--dsn", dsn)
	if !strings.Contains(stdout, "undid ") {
		t.Errorf("restore said %q; want the changes it undid", stdout)
	}
	if d := diffSettings(before, settings()); len(d) > 0 {
		t.Errorf("after restore the global variables differ from before: %v", d)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("journal %s still there after a complete restore", path)
	}
	assertNoSecret(t, tmp, out.String()+stdout+stderr)
}

func TestMariaDBDryRunChangesNothing(t *testing.T) {
	needServers(t)
	tmp, state := privateState(t)
	dsn, settings := externalMariaDB(t)
	before := settings()
	stdout, stderr := runOK(t, "run", "--engine", "mariadb", "--dsn", dsn, "--dry-run",
		"--observers", "general-log-file,server-audit-file,perf-schema", "--out", filepath.Join(tmp, "out"))
	for _, want := range []string{
		"CREATE DATABASE `obsbench` CHARACTER SET utf8mb4 COMMENT", "INSERT INTO member ...",
		"observer general-log-file, before each of its runs:\n  SET GLOBAL general_log = 'ON'",
		"INSTALL SONAME 'server_audit'", "UNINSTALL SONAME 'server_audit'",
		"observer perf-schema: cannot be applied to this server",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("dry run output lacks %q:\n%s", want, stdout)
		}
	}
	if d := diffSettings(before, settings()); len(d) > 0 {
		t.Errorf("global variables changed by a dry run: %v", d)
	}
	if left, _ := journal.List(state); len(left) > 0 {
		t.Errorf("a dry run wrote journals %v", left)
	}
	assertNoSecret(t, tmp, stdout+stderr)
}
