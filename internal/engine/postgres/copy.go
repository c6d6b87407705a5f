package postgres

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/obsbench/obsbench/internal/server"
)

// StartCopy copies p, running, into a new managed server with
// pg_basebackup: p's files at one moment, the dataset's tables and indexes
// page for page, started as a server of its own (not a standby: nothing
// follows p afterwards) on a port and socket of its own, with p's roles
// and password. A duet's twins are made this way, so that the data cannot
// be what tells them apart.
func (p *Instance) StartCopy(ctx context.Context, logf func(string, ...any)) (*Instance, error) {
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
	conn := fmt.Sprintf("host=%s port=%d user=postgres passfile=%s", p.Base, p.port, c.PassFile())
	if _, err := c.command(ctx, "pg_basebackup", "-D", c.dataDir, "-X", "stream", "-c", "fast", "--no-sync", "-d", conn); err != nil {
		return nil, err
	}
	if err := c.startCopied(ctx, nil, uid, gid); err != nil {
		return nil, err
	}
	ok = true
	logf("postgres copy running on 127.0.0.1:%d and %s", c.port, c.Base)
	return c, nil
}

// newPeer prepares a server that will hold a copy of p's files (a
// standby, a copy): its private directory, a password file with p's
// password (the copy has p's roles), and a port of its own. Its data
// directory is empty; the caller stops it if it fails later.
func (p *Instance) newPeer(logf func(string, ...any)) (c *Instance, uid, gid int, err error) {
	dirs, uid, gid, err := server.NewDir(dirSpec, logf)
	if err != nil {
		return nil, 0, 0, err
	}
	c = &Instance{binDir: p.binDir, dataDir: filepath.Join(dirs.Base, "data"), Dir: dirs, password: p.password}
	if err = c.writePassFile(uid, gid); err == nil {
		c.port, err = server.FreePort()
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
func (c *Instance) startCopied(ctx context.Context, settings map[string]string, uid, gid int) error {
	if err := c.writeConfig(settings); err != nil {
		return err
	}
	var err error
	if c.stream, err = openLogStream(filepath.Join(c.Base, "server.log"), uid, gid); err != nil {
		return err
	}
	return c.pgctl(ctx, "start", "-t", "120")
}
