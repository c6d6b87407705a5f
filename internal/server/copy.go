package server

import (
	"context"
	"fmt"
	"maps"
	"os/exec"
	"path/filepath"
	"strconv"
)

// StartCopy copies p, running, into a new managed server with
// pg_basebackup: p's files at one moment, the dataset's tables and indexes
// page for page, started as a server of its own (not a standby: nothing
// follows p afterwards) on a port and socket of its own, with p's roles
// and password. A duet's twins are made this way, so that the data cannot
// be what tells them apart.
func (p *Postgres) StartCopy(ctx context.Context, logf func(string, ...any)) (*Postgres, error) {
	if logf == nil {
		logf = func(string, ...any) {}
	}
	c, uid, gid, err := p.newPeer(logf)
	if err != nil {
		return nil, err
	}
	ok := false
	defer func() {
		if !ok {
			c.Stop()
		}
	}()
	logf("pg_basebackup of the server into %s", c.dataDir)
	conn := fmt.Sprintf("host=%s port=%d user=postgres passfile=%s", p.base, p.port, c.PassFile())
	if _, err := c.command(ctx, "pg_basebackup", "-D", c.dataDir, "-X", "stream", "-c", "fast", "--no-sync", "-d", conn); err != nil {
		return nil, err
	}
	if err := c.startCopied(ctx, nil, uid, gid); err != nil {
		return nil, err
	}
	ok = true
	logf("postgres copy running on 127.0.0.1:%d and %s", c.port, c.base)
	return c, nil
}

// newPeer prepares a server that will hold a copy of p's files (a
// standby, a copy): its private directory, a password file with p's
// password (the copy has p's roles), and a port of its own. Its data
// directory is empty; the caller stops it if it fails later.
func (p *Postgres) newPeer(logf func(string, ...any)) (c *Postgres, uid, gid int, err error) {
	dirs, uid, gid, err := newServerDir(tempPrefix, "postgres", "apt-get install postgresql-15", logf)
	if err != nil {
		return nil, 0, 0, err
	}
	c = &Postgres{binDir: p.binDir, dataDir: filepath.Join(dirs.base, "data"), sinkDirs: dirs, password: p.password}
	if err = c.writePassFile(uid, gid); err == nil {
		c.port, err = freePort()
	}
	if err != nil {
		c.Stop()
		return nil, 0, 0, err
	}
	return c, uid, gid, nil
}

// startCopied starts c once its data directory holds a copy: the copied
// postgresql.conf is the other server's, its port and socket included, so
// c's own, and settings, are appended after it and win.
func (c *Postgres) startCopied(ctx context.Context, settings map[string]string, uid, gid int) error {
	if err := c.writeConfig(settings); err != nil {
		return err
	}
	var err error
	if c.stream, err = openLogStream(filepath.Join(c.base, "server.log"), uid, gid); err != nil {
		return err
	}
	return c.pgctl(ctx, "start", "-t", "120")
}

// StartCopy stops m, copies its data directory into a new managed server
// (owners and modes kept), and starts both: m's files at one moment, the
// dataset's tables page for page, with m's accounts and password, on a
// port and socket of its own. MariaDB has no online copy in its server
// packages (mariabackup is a package of its own), so m is stopped for the
// copy, as a restart before each run stops it anyway.
func (m *MariaDB) StartCopy(ctx context.Context, logf func(string, ...any)) (*MariaDB, error) {
	if logf == nil {
		logf = func(string, ...any) {}
	}
	dirs, _, _, err := newServerDir(mariadbPrefix, "mysql", "apt-get install mariadb-server", logf)
	if err != nil {
		return nil, err
	}
	c := &MariaDB{bin: m.bin, dataDir: filepath.Join(dirs.base, "data"), sinkDirs: dirs, password: m.password, keep: m.keep}
	ok := false
	defer func() {
		if !ok {
			c.Stop()
		}
	}()
	if c.port, err = freePort(); err != nil {
		return nil, err
	}
	c.options = maps.Clone(m.options)
	maps.Copy(c.options, map[string]string{
		"datadir": c.dataDir, "socket": c.Socket(), "port": strconv.Itoa(c.port),
		"pid_file": filepath.Join(c.base, "mariadbd.pid"), "log_error": c.ErrorLog(), "tmpdir": c.base,
	})
	if err := c.writeOptions(); err != nil {
		return nil, err
	}
	if err := c.writeClientFile(); err != nil {
		return nil, err
	}
	logf("copying the server's data directory into %s (the server stopped meanwhile)", c.dataDir)
	m.stop()
	cpErr := copyTree(ctx, m.dataDir, c.dataDir)
	if err := m.start(ctx); err != nil {
		return nil, fmt.Errorf("restart the server after copying it: %w", err)
	}
	if cpErr != nil {
		return nil, cpErr
	}
	if err := c.start(ctx); err != nil {
		return nil, err
	}
	ok = true
	logf("mariadb copy running on 127.0.0.1:%d and %s", c.port, c.Socket())
	return c, nil
}

// copyTree copies the directory from to to, owners and modes kept
// (cp -a): a data directory copied whole, for a server of its own.
func copyTree(ctx context.Context, from, to string) error {
	if out, err := exec.CommandContext(ctx, "cp", "-a", from, to).CombinedOutput(); err != nil {
		return fmt.Errorf("copy %s: %w: %s", from, err, out)
	}
	return nil
}
