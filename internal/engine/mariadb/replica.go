package mariadb

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"

	"github.com/obsbench/obsbench/internal/server"
)

// replicaUser is the account a managed replica reads the primary's binary
// log as, over loopback TCP (root is reached only on the socket), with a
// random password of its own (which the replica keeps in its data
// directory's master.info).
const replicaUser = "obsbench_repl"

// Replica is a MariaDB replica of a managed primary. Stop it before its
// primary.
type Replica struct {
	*Instance
	server.Companion
	primary *Instance
}

// StartReplica turns m into a primary (binary log, server id 1, and with
// Sync the semi-synchronous primary side on from start-up, which
// restarts m) and starts a second managed server that replicates from it,
// with the semi-synchronous replica side on. It returns once the replica
// reads the binary log (and acknowledges it, with Sync).
func (m *Instance) StartReplica(ctx context.Context, opts server.CompanionOptions) (*Replica, error) {
	logf := opts.Logf()
	primary := map[string]string{"server_id": "1", "log_bin": "obsbench-bin", "binlog_format": "ROW"}
	for k, v := range primary {
		if err := m.SetOption(k, &v); err != nil {
			return nil, err
		}
	}
	if err := m.Restart(ctx); err != nil {
		return nil, fmt.Errorf("restart the primary with its binary log: %w", err)
	}
	replicaPassword := server.NewPassword()
	if _, err := m.sql(ctx, fmt.Sprintf("CREATE OR REPLACE USER %s@'127.0.0.1' IDENTIFIED BY '%s'; GRANT REPLICATION SLAVE ON *.* TO %s@'127.0.0.1'",
		replicaUser, replicaPassword, replicaUser), replicaPassword); err != nil {
		return nil, err
	}
	settings := map[string]string{"server_id": "2", "skip_slave_start": "ON"}
	if opts.Sync {
		settings["rpl_semi_sync_slave_enabled"] = "ON"
	}
	rm, err := Start(ctx, InstanceOptions{Settings: settings, Log: logf})
	if err != nil {
		return nil, fmt.Errorf("start the replica: %w", err)
	}
	r := &Replica{Instance: rm, primary: m, Companion: server.NewCompanion(opts.Sync)}
	ok := false
	defer func() {
		if !ok {
			r.Stop()
		}
	}()
	port, err := r.Link(m.port, opts.Delay, rm.uid(), "replica", logf)
	if err != nil {
		return nil, err
	}
	if _, err := rm.sql(ctx, fmt.Sprintf("CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT=%d, MASTER_USER='%s', MASTER_PASSWORD='%s', MASTER_CONNECT_RETRY=1, MASTER_USE_GTID=slave_pos; START SLAVE",
		port, replicaUser, replicaPassword), replicaPassword); err != nil {
		return nil, err
	}
	if opts.Sync {
		// Only now that the replica is there: a semi-synchronous primary
		// without one waits out the timeout at every commit. A replica
		// that does not acknowledge within a minute turns the primary
		// asynchronous; a shorter timeout would hide a stalled replica
		// inside a run. The option file has them for later restarts.
		for k, v := range map[string]string{"rpl_semi_sync_master_timeout": "60000", "rpl_semi_sync_master_enabled": "ON"} {
			if _, err := m.sql(ctx, fmt.Sprintf("SET GLOBAL %s = %s", k, v)); err != nil {
				return nil, err
			}
			if err := m.SetOption(k, &v); err != nil {
				return nil, err
			}
		}
	}
	if err := r.WaitStreaming(ctx); err != nil {
		return nil, err
	}
	ok = true
	mode := "asynchronous"
	if opts.Sync {
		mode = "semi-synchronous"
	}
	logf("%s replica reading the binary log on 127.0.0.1:%d and %s", mode, rm.port, rm.Socket())
	return r, nil
}

// WaitStreaming waits until the primary has the replica's binary log dump
// thread (and, with Sync, counts it as a semi-synchronous client and
// commits semi-synchronously: Rpl_semi_sync_master_status is OFF while
// the primary has fallen back to asynchronous commits, until a replica
// catches up): after the primary restarts, commits would otherwise not
// wait for it, or wait for its reconnection, inside a measured run.
func (r *Replica) WaitStreaming(ctx context.Context) error {
	query := "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE COMMAND LIKE 'Binlog Dump%'"
	if r.Sync() {
		query = `SELECT SUM(VARIABLE_NAME = 'RPL_SEMI_SYNC_MASTER_CLIENTS' AND VARIABLE_VALUE = '1') * SUM(VARIABLE_NAME = 'RPL_SEMI_SYNC_MASTER_STATUS' AND VARIABLE_VALUE = 'ON')
FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME IN ('RPL_SEMI_SYNC_MASTER_CLIENTS', 'RPL_SEMI_SYNC_MASTER_STATUS')`
	}
	err := server.PollOne(ctx, func(ctx context.Context, q string) (string, error) { return r.primary.sql(ctx, q) }, query)
	if err != nil && ctx.Err() == nil {
		return fmt.Errorf("replica not connected: %w\nreplica error log:\n%s", err, r.logTail())
	}
	return err
}

// Stop stops the replica and its relay and removes its directory.
func (r *Replica) Stop() error { return r.ShutDown(r.Instance) }

// sql runs statements as root over the server's socket with the mariadb
// client and returns the output (tab-separated, no headers). The
// statements go on its standard input, not its command line, which every
// account can read: they may hold a password, given in secrets so that an
// error quotes them without it.
func (m *Instance) sql(ctx context.Context, stmts string, secrets ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "mariadb", "--defaults-file="+m.clientFile(), "-N", "-B")
	cmd.Stdin = strings.NewReader(stmts)
	out, err := cmd.CombinedOutput()
	if err != nil {
		secrets = append(secrets, m.password)
		return "", fmt.Errorf("mariadb: %s: %w: %s", server.Redact(stmts, secrets...), err, server.Redact(strings.TrimSpace(string(out)), secrets...))
	}
	return strings.TrimSpace(string(out)), nil
}

// uid is the OS user the server runs as.
func (m *Instance) uid() int {
	if m.Cred != nil {
		return int(m.Cred.Uid)
	}
	return os.Geteuid()
}
