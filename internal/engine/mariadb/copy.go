package mariadb

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"strconv"

	"github.com/obsbench/obsbench/internal/server"
)

// StartCopy stops m, copies its data directory into a new managed server
// (owners and modes kept), and starts both: m's files at one moment, the
// dataset's tables page for page, with m's accounts and password, on a
// port and socket of its own. MariaDB has no online copy in its server
// packages (mariabackup is a package of its own), so m is stopped for the
// copy, as a restart before each run stops it anyway.
func (m *Instance) StartCopy(ctx context.Context, logf func(string, ...any)) (*Instance, error) {
	if logf == nil {
		logf = func(string, ...any) {}
	}
	dirs, _, _, err := server.NewDir(dirSpec, logf)
	if err != nil {
		return nil, err
	}
	c := &Instance{bin: m.bin, dataDir: filepath.Join(dirs.Base, "data"), Dir: dirs, password: m.password, keep: m.keep}
	ok := false
	defer func() {
		if !ok {
			c.Stop()
		}
	}()
	if c.port, err = server.FreePort(); err != nil {
		return nil, err
	}
	c.options = maps.Clone(m.options)
	maps.Copy(c.options, map[string]string{
		"datadir": c.dataDir, "socket": c.Socket(), "port": strconv.Itoa(c.port),
		"pid_file": filepath.Join(c.Base, pidFile), "log_error": c.ErrorLog(), "tmpdir": c.Base,
	})
	if err := c.writeOptions(); err != nil {
		return nil, err
	}
	if err := c.writeClientFile(); err != nil {
		return nil, err
	}
	logf("copying the server's data directory into %s (the server stopped meanwhile)", c.dataDir)
	m.stop()
	cpErr := server.CopyTree(ctx, m.dataDir, c.dataDir)
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
