package postgres

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/obsbench/obsbench/internal/server"
)

// StandbyName is the application name a managed standby connects with:
// what synchronous_standby_names names to make it synchronous.
const StandbyName = "obsbench_standby"

// Standby is a streaming standby of a managed primary, in a directory of
// its own with its own port. Stop it before its primary.
type Standby struct {
	*Instance
	server.Companion
	primary *Instance
}

// StartStandby copies p with pg_basebackup -R (which writes the
// connection to the primary into the copy), starts the copy as a streaming
// standby on a port of its own, and, with opts.Sync, names it in the
// primary's synchronous_standby_names. It returns once the standby streams
// (and is the synchronous one, with Sync).
func (p *Instance) StartStandby(ctx context.Context, opts server.CompanionOptions) (*Standby, error) {
	logf := opts.Logf()
	// The copy has the primary's roles and password; the standby keeps
	// its own password file, which pg_basebackup -R names (not the
	// password) in the connection it writes for the WAL receiver.
	peer, uid, gid, err := p.newPeer(logf)
	if err != nil {
		return nil, err
	}
	s := &Standby{Instance: peer, primary: p, Companion: server.NewCompanion(opts.Sync)}
	ok := false
	defer func() {
		if !ok {
			s.Stop()
		}
	}()
	host := p.Base
	if opts.Delay > 0 {
		logf("standby link: %s", netemStatus(ctx))
		host = "127.0.0.1"
	}
	port, err := s.Link(p.port, opts.Delay, uid, "standby", logf)
	if err != nil {
		return nil, err
	}
	conn := fmt.Sprintf("host=%s port=%d user=postgres application_name=%s passfile=%s", host, port, StandbyName, s.PassFile())
	if err := s.baseBackup(ctx, conn, logf); err != nil {
		return nil, err
	}
	// A short retry interval brings the standby back within a fraction
	// of a second after the primary restarts (before every run).
	if err := s.startCopied(ctx, map[string]string{
		"hot_standby":                 "on",
		"wal_retrieve_retry_interval": "'100ms'",
		"cluster_name":                "'" + StandbyName + "'",
	}, uid, gid); err != nil {
		return nil, err
	}
	if opts.Sync {
		if err := p.SetSettings(ctx, map[string]string{"synchronous_standby_names": "'" + StandbyName + "'"}); err != nil {
			return nil, err
		}
	}
	if err := s.WaitStreaming(ctx); err != nil {
		return nil, err
	}
	ok = true
	mode := "asynchronous"
	if opts.Sync {
		mode = "synchronous"
	}
	logf("%s standby streaming on 127.0.0.1:%d and %s", mode, s.port, s.Base)
	return s, nil
}

// baseBackup copies the primary into the standby's data directory with
// pg_basebackup -R over conn. A copy whose connection the relay closed
// unserved is tried once more (pg_basebackup removes what it wrote when
// it fails), and the relay's reason is logged or, if the second try fails
// too, part of the error.
func (s *Standby) baseBackup(ctx context.Context, conn string, logf func(string, ...any)) error {
	args := []string{"-D", s.dataDir, "-R", "-X", "stream", "-c", "fast", "--no-sync", "-d", conn}
	logf("pg_basebackup -R into %s", s.dataDir)
	_, err := s.command(ctx, "pg_basebackup", args...)
	if err == nil || s.Relay() == nil || s.Relay().Unserved() == nil || ctx.Err() != nil {
		return err
	}
	logf("pg_basebackup failed, the relay having closed a connection (%v); trying once more", s.Relay().Unserved())
	if _, err = s.command(ctx, "pg_basebackup", args...); err != nil {
		if why := s.Relay().Unserved(); why != nil {
			err = fmt.Errorf("%w\n(%v)", err, why)
		}
	}
	return err
}

// WaitStreaming waits until the primary reports the standby streaming
// (and synchronous, for a synchronous standby): after the primary
// restarts, commits would otherwise wait for the standby to reconnect
// inside a measured run.
func (s *Standby) WaitStreaming(ctx context.Context) error {
	want := "async"
	if s.Sync() {
		want = "sync"
	}
	query := fmt.Sprintf("SELECT count(*) FROM pg_stat_replication WHERE application_name = '%s' AND state = 'streaming' AND sync_state = '%s'", StandbyName, want)
	err := server.PollOne(ctx, s.primary.psql, query)
	if err != nil && ctx.Err() == nil {
		return fmt.Errorf("standby not streaming as %s: %w\nstandby log:\n%s", want, err, s.logTail())
	}
	return err
}

// WalReceiverPID is the standby's WAL receiver process, 0 when it has none.
func (s *Standby) WalReceiverPID(ctx context.Context) (int, error) {
	out, err := s.psql(ctx, "SELECT coalesce(max(pid), 0) FROM pg_stat_wal_receiver")
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(out)
}

// Stop stops the standby and its relay and removes its directory.
func (s *Standby) Stop() error { return s.ShutDown(s.Instance) }

// SetSettings appends settings to the managed server's postgresql.conf
// and reloads it: for settings of the managed set-up itself (a standby's
// name), which are not observers and need no journal, since the whole
// cluster is discarded at Stop.
func (p *Instance) SetSettings(ctx context.Context, settings map[string]string) error {
	if err := p.appendConfig(settings); err != nil {
		return err
	}
	_, err := p.command(ctx, "pg_ctl", "reload", "-D", p.dataDir)
	return err
}

// psql runs one query over the server's socket and returns its one value.
func (p *Instance) psql(ctx context.Context, query string) (string, error) {
	return p.psqlIn(ctx, "postgres", query)
}

// psqlIn is psql in database db.
func (p *Instance) psqlIn(ctx context.Context, db, query string) (string, error) {
	out, err := p.command(ctx, "psql", "-X", "-A", "-t", "-h", p.Base, "-p", strconv.Itoa(p.port), "-U", "postgres", "-d", db, "-c", query)
	return strings.TrimSpace(string(out)), err
}

// netemStatus says whether the kernel can delay packets (tc netem) in a
// network namespace, which would put the standby behind a real link; the
// relay is used either way, and this tells the user what the machine has.
func netemStatus(ctx context.Context) string {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	// A namespace of its own, removed at once: the probe changes nothing
	// of the machine's network.
	ns := "obsbench-probe-" + strconv.Itoa(os.Getpid())
	if out, err := exec.CommandContext(ctx, "ip", "netns", "add", ns).CombinedOutput(); err != nil {
		return "no network namespaces on this machine (ip netns add: " + strings.TrimSpace(string(out)) + "); delay added in user space"
	}
	defer exec.Command("ip", "netns", "del", ns).Run()
	out, err := exec.CommandContext(ctx, "ip", "netns", "exec", ns, "tc", "qdisc", "add", "dev", "lo", "root", "netem", "delay", "1ms").CombinedOutput()
	if err != nil {
		return "tc netem not available on this machine (" + strings.TrimSpace(string(out)) + "); delay added in user space"
	}
	return "tc netem works on this machine, but the standby stays on loopback; delay added in user space"
}
