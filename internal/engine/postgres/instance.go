package postgres

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/obsbench/obsbench/internal/server"
	"github.com/obsbench/obsbench/internal/slowfs"
)

// ErrNoBinaries is returned when no PostgreSQL installation can be found.
var ErrNoBinaries = errors.New("postgresql binaries not found")

// dirSpec is a managed PostgreSQL's directory: the postmaster writes its
// process id in data/postmaster.pid, and SIGQUIT is PostgreSQL's
// immediate shutdown.
var dirSpec = server.DirSpec{
	Prefix: "obsbench-pg-", OSUser: "postgres", Install: "apt-get install postgresql-15",
	PIDFile: "data/postmaster.pid", Signal: syscall.SIGQUIT,
}

// InstanceOptions configures a managed PostgreSQL server.
type InstanceOptions struct {
	// BinDir holds initdb, pg_ctl and postgres; empty means FindBin.
	BinDir string
	// Settings are written to postgresql.conf after the benchmark defaults
	// and override them.
	Settings map[string]string
	// Log receives progress lines (nil discards them).
	Log func(format string, args ...any)
	// Getenv reads the caller's environment, for TemplateEnv (nil reads
	// none).
	Getenv func(string) string
}

// Instance is a running managed PostgreSQL server. Its zero value is not
// usable; create one with Start and always call Stop.
type Instance struct {
	server.Dir // base: temp directory with socket, server log, data directory
	binDir     string
	dataDir    string
	port       int
	stream     *LogStream // the server's stderr, read by obsbench
	password   string     // the superuser's, also in passFile
	// counter, if set, is the program pg_ctl starts instead of postgres:
	// postgres under valgrind's instruction counter (CountInstructions).
	counter string
	// shift is how much lower a counted lifetime's stack begins
	// (ShiftStack).
	shift int
	// countedLife says the running postmaster was started under the
	// counter: a restart or stop waits for its count (waitCount).
	countedLife bool
	// splitStatements makes the counter callgrind, writing each process's
	// count at every statement's start (SplitStatements).
	splitStatements bool
	// parts are the counts read whole, by process id: a process's parts
	// (StatementCounts) add up to its count, one part where it was not
	// split at its statements.
	parts map[int][]uint64
}

// benchmarkSettings size the server for a CPU-bound benchmark on a small
// machine: the data set fits in shared_buffers, checkpoints stay out of the
// measured window, and JIT (whose compile time varies run to run) is off.
var benchmarkSettings = map[string]string{
	"shared_buffers":     "256MB",
	"max_connections":    "200",
	"max_wal_size":       "4GB",
	"checkpoint_timeout": "30min",
	"jit":                "off",
	"huge_pages":         "off",
	"log_line_prefix":    "'%m [%p] '",
	"lc_messages":        "'C'",
}

// FindBin locates the directory with PostgreSQL's server binaries:
// `pg_config --bindir` when that holds initdb, else the newest
// /usr/lib/postgresql/*/bin.
func FindBin() (string, error) {
	if out, err := exec.Command("pg_config", "--bindir").Output(); err == nil {
		dir := strings.TrimSpace(string(out))
		if server.IsExecutable(filepath.Join(dir, "initdb")) {
			return dir, nil
		}
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return versionOf(dirs[i]) > versionOf(dirs[j]) })
	for _, d := range dirs {
		if server.IsExecutable(filepath.Join(d, "initdb")) {
			return d, nil
		}
	}
	return "", fmt.Errorf("%w: no initdb in `pg_config --bindir` or /usr/lib/postgresql/*/bin (apt-get install postgresql-15)", ErrNoBinaries)
}

func versionOf(binDir string) float64 {
	v, _ := strconv.ParseFloat(filepath.Base(filepath.Dir(binDir)), 64)
	return v
}

// Start initialises a new cluster in a temporary directory and starts
// it listening on a free port on 127.0.0.1 and on a unix socket in that
// directory. When obsbench runs as root, the server runs as the unprivileged
// `postgres` user, since PostgreSQL refuses to run as root. Every
// connection, on the socket too, authenticates with SCRAM as `postgres`
// with a random password that only the server's password file holds.
func Start(ctx context.Context, opts InstanceOptions) (*Instance, error) {
	logf := opts.Log
	if logf == nil {
		logf = func(string, ...any) {}
	}
	binDir := opts.BinDir
	if binDir == "" {
		var err error
		if binDir, err = FindBin(); err != nil {
			return nil, err
		}
	}
	dirs, uid, gid, err := server.NewDir(dirSpec, logf)
	if err != nil {
		return nil, err
	}
	base := dirs.Base
	p := &Instance{binDir: binDir, dataDir: filepath.Join(base, "data"), Dir: dirs}
	ok := false
	defer func() {
		if !ok {
			p.Stop()
		}
	}()
	if p.port, err = server.FreePort(); err != nil {
		return nil, err
	}
	p.password = server.NewPassword()
	if err := p.writePassFile(uid, gid); err != nil {
		return nil, err
	}
	if err := p.initCluster(ctx, uid, gid, server.Lookup(opts.Getenv, TemplateEnv), logf); err != nil {
		return nil, err
	}
	if err := p.writeConfig(opts.Settings); err != nil {
		return nil, err
	}
	if p.stream, err = openLogStream(filepath.Join(base, "server.log"), uid, gid); err != nil {
		return nil, err
	}
	if err := p.pgctl(ctx, "start", "-t", "120"); err != nil {
		return nil, err
	}
	ok = true
	logf("postgres running on 127.0.0.1:%d and %s", p.port, base)
	return p, nil
}

func (p *Instance) writeConfig(extra map[string]string) error {
	settings := map[string]string{
		"listen_addresses":        "'127.0.0.1'",
		"port":                    strconv.Itoa(p.port),
		"unix_socket_directories": "'" + p.Base + "'",
	}
	for k, v := range benchmarkSettings {
		settings[k] = v
	}
	for k, v := range extra {
		settings[k] = v
	}
	return p.appendConfig(settings)
}

// appendConfig appends settings to postgresql.conf, where later lines win.
func (p *Instance) appendConfig(settings map[string]string) error {
	keys := make([]string, 0, len(settings))
	for k := range settings {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteString("\n# obsbench managed server\n")
	for _, k := range keys {
		fmt.Fprintf(&b, "%s = %s\n", k, settings[k])
	}
	f, err := os.OpenFile(filepath.Join(p.dataDir, "postgresql.conf"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("write postgresql.conf: %w", err)
	}
	defer f.Close()
	_, err = f.WriteString(b.String())
	return err
}

// DSN is a libpq connection string for database db over the unix socket.
// It names the server's password file, not the password: the string is
// safe to print, and useful only to an account that can read the server's
// private directory.
func (p *Instance) DSN(db string) string {
	return fmt.Sprintf("host=%s port=%d user=postgres dbname=%s sslmode=disable passfile=%s", p.Base, p.port, db, p.PassFile())
}

// PassFile is the server's libpq password file (0600, in its private
// directory): the superuser's password for any host, port and database.
func (p *Instance) PassFile() string { return filepath.Join(p.Base, "pgpass") }

// writePassFile writes the password file, owned by the server's OS user,
// which reads it too (pg_basebackup, a standby's WAL receiver); libpq
// ignores a password file that others may read.
func (p *Instance) writePassFile(uid, gid int) error {
	return server.WritePrivate(p.PassFile(), "*:*:*:postgres:"+p.password+"\n", uid, gid)
}

// Port is the TCP port on 127.0.0.1.
func (p *Instance) Port() int { return p.port }

// SocketDir is the directory holding the unix socket.
func (p *Instance) SocketDir() string { return p.Base }

// DataDir is the cluster's data directory.
func (p *Instance) DataDir() string { return p.dataDir }

// BinDir is where the server binaries came from.
func (p *Instance) BinDir() string { return p.binDir }

// ServerLog is the file obsbench appends the server's stderr to.
func (p *Instance) ServerLog() string { return filepath.Join(p.Base, "server.log") }

// Stream is the server's stderr as obsbench reads it.
func (p *Instance) Stream() *LogStream { return p.stream }

// PID is the postmaster's process id, read from postmaster.pid.
func (p *Instance) PID() (int, error) {
	return server.ReadPID(filepath.Join(p.dataDir, "postmaster.pid"))
}

// Restart stops the server (fast shutdown) and starts it again, which is how
// settings of context `postmaster` such as shared_preload_libraries change.
func (p *Instance) Restart(ctx context.Context) error {
	pm := p.countedPostmaster()
	if err := p.pgctl(ctx, "restart", "-m", "fast", "-t", "120"); err != nil {
		return err
	}
	return p.waitCount(ctx, pm)
}

// Stop shuts the server down and removes its directory. It is safe to call
// more than once and on a partly started server.
func (p *Instance) Stop() error {
	if p.Base == "" {
		return nil
	}
	var err error
	if _, statErr := os.Stat(filepath.Join(p.dataDir, "postmaster.pid")); statErr == nil {
		// A fresh context: Stop runs after the caller's context was cancelled.
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		pm := p.countedPostmaster()
		if err = p.pgctl(ctx, "stop", "-m", "fast", "-t", "30"); err != nil {
			err = p.pgctl(ctx, "stop", "-m", "immediate", "-t", "30")
		}
		if err == nil {
			err = p.waitCount(ctx, pm)
		}
	}
	if p.stream != nil {
		p.stream.close()
		p.stream = nil
	}
	if mErr := p.CloseMounts(); mErr != nil && err == nil {
		err = mErr
	}
	if rmErr := os.RemoveAll(p.Base); rmErr != nil && err == nil {
		err = rmErr
	}
	p.Base = ""
	return err
}

func (p *Instance) pgctl(ctx context.Context, action string, args ...string) error {
	args = append([]string{action, "-D", p.dataDir, "-w"}, args...)
	if p.counter != "" && action != "stop" {
		// A restart would start the program postmaster.opts names, the
		// real postgres: the counter is named every time.
		args = append(args, "-p", p.counter)
	}
	if action == "restart" {
		// Else a restart passes the postmaster the arguments of the
		// lifetime before (postmaster.opts): a lifetime after a counted
		// one would keep the counter's settings.
		args = append(args, "-o", "")
	}
	var err error
	if action == "stop" {
		_, err = p.command(ctx, "pg_ctl", args...)
		p.countedLife = false
	} else {
		err = p.startCommand(ctx, "pg_ctl", args...)
		p.countedLife = err == nil && p.counter != ""
	}
	if err != nil && action != "stop" {
		if tail := p.logTail(); tail != "" {
			err = fmt.Errorf("%w\nserver log:\n%s", err, tail)
		}
	}
	return err
}

// command runs one of the server binaries as the server's OS user, in its own
// process group so that a Ctrl-C on the terminal reaches obsbench only:
// obsbench reverts its changes first and then stops the server itself.
func (p *Instance) command(ctx context.Context, name string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, filepath.Join(p.binDir, name), args...)
	cmd.Dir = p.Base
	cmd.Env = p.env()
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Credential: p.Cred}
	out, err := cmd.CombinedOutput()
	if err != nil {
		return out, fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return out, nil
}

// startCommand runs pg_ctl start or restart with its output, and so the
// postmaster's stdout and stderr, on the log stream: the postmaster
// inherits them from pg_ctl.
func (p *Instance) startCommand(ctx context.Context, name string, args ...string) error {
	cmd := exec.CommandContext(ctx, filepath.Join(p.binDir, name), args...)
	cmd.Dir = p.Base
	cmd.Env = p.env()
	if p.counter != "" {
		cmd.Env = append(cmd.Env, server.StackShiftVar(p.shift))
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Credential: p.Cred}
	cmd.Stdout, cmd.Stderr = p.stream.writer(), p.stream.writer()
	if p.Mounted() {
		slowfs.CloseFuseOnExec()
	}
	if err := cmd.Run(); err != nil {
		time.Sleep(200 * time.Millisecond) // let the stream's client write out pg_ctl's words
		return fmt.Errorf("%s %s: %w", name, strings.Join(args, " "), err)
	}
	return nil
}

// env is the server binaries' environment: the password file for the
// clients among them (psql, pg_basebackup), which no user's PGPASSWORD or
// ~/.pgpass may override.
func (p *Instance) env() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PGPASSWORD=") && !strings.HasPrefix(kv, "PGPASSFILE=") {
			env = append(env, kv)
		}
	}
	return append(env, "LC_ALL=C", "PGPASSFILE="+p.PassFile())
}

func (p *Instance) logTail() string { return server.FileTail(p.ServerLog(), 15) }
