package mariadb

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/obsbench/obsbench/internal/poll"
	"github.com/obsbench/obsbench/internal/server"
	"github.com/obsbench/obsbench/internal/slowfs"
)

// ErrNoBinaries is returned when the MariaDB server binaries are missing.
var ErrNoBinaries = errors.New("mariadb binaries not found")

// dirSpec is a managed MariaDB's directory: mariadbd writes its process
// id in pidFile there, and SIGKILL stops it at once (the server is
// disposable: nothing to flush).
var dirSpec = server.DirSpec{
	Prefix: "obsbench-mariadb-", OSUser: "mysql", Install: "apt-get install mariadb-server",
	PIDFile: pidFile, Signal: syscall.SIGKILL,
}

// pidFile is where mariadbd writes its process id, in its directory.
const pidFile = "mariadbd.pid"

// mariadbSettings size the server for a CPU-bound benchmark on a small
// machine, as benchmarkSettings do for PostgreSQL: the data set fits in the
// buffer pool, the binary log is off (MariaDB's default), and names are not
// resolved. performance_schema is off, MariaDB's own default: it is an
// observer here.
var mariadbSettings = map[string]string{
	"innodb_buffer_pool_size": "256M",
	"max_connections":         "200",
	"skip_name_resolve":       "ON",
	"performance_schema":      "OFF",
	"character_set_server":    "utf8mb4",
	"lc_messages":             "en_US",
}

// InstanceOptions configures a managed MariaDB server.
type InstanceOptions struct {
	// Settings are server options written to its option file after the
	// benchmark defaults, overriding them.
	Settings map[string]string
	// Log receives progress lines (nil discards them).
	Log func(format string, args ...any)
	// Getenv reads the caller's environment, for KeepCountsEnv (nil
	// reads none).
	Getenv func(string) string
}

// Instance is a running managed MariaDB server. Create one with
// Start and always call Stop.
type Instance struct {
	server.Dir // base: temp directory with socket, option file, data directory
	bin        string
	dataDir    string
	port       int
	options    map[string]string // the option file's [mariadbd] section
	password   string            // root@localhost's, also in clientFile
	cmd        *exec.Cmd
	exited     chan struct{} // closed when cmd has exited
	// counter, if set, is valgrind's command line to start mariadbd
	// under (CountInstructions); endedPID is the process id of the
	// counted lifetime that the latest stop ended (LastTally).
	counter  []string
	counted  bool   // cmd runs under the counter
	keep     string // where counted lifetimes' files are copied (KeepCountsEnv)
	shift    int    // how much lower a counted lifetime's stack begins
	endedPID int
}

// FindBinaries locates mariadbd and mariadb-install-db.
func FindBinaries() (bin, installDB string, err error) {
	for _, pair := range [][2]string{
		{"/usr/sbin/mariadbd", "/usr/bin/mariadb-install-db"},
		{"/usr/sbin/mysqld", "/usr/bin/mysql_install_db"},
	} {
		if server.IsExecutable(pair[0]) && server.IsExecutable(pair[1]) {
			return pair[0], pair[1], nil
		}
	}
	s, err1 := exec.LookPath("mariadbd")
	i, err2 := exec.LookPath("mariadb-install-db")
	if err1 == nil && err2 == nil {
		return s, i, nil
	}
	return "", "", fmt.Errorf("%w: no mariadbd and mariadb-install-db in /usr/sbin, /usr/bin or PATH (apt-get install mariadb-server)", ErrNoBinaries)
}

// Start creates a new server in a temporary directory with
// mariadb-install-db and starts it on a free port on 127.0.0.1 and a unix
// socket in that directory. Its one account that logs in is
// root@localhost, reached only on the socket, with a random password that
// only the client option file in that directory holds. When obsbench runs
// as root the server runs as the `mysql` user, as the package's own
// server does.
func Start(ctx context.Context, opts InstanceOptions) (*Instance, error) {
	logf := opts.Log
	if logf == nil {
		logf = func(string, ...any) {}
	}
	bin, installDB, err := FindBinaries()
	if err != nil {
		return nil, err
	}
	dirs, uid, gid, err := server.NewDir(dirSpec, logf)
	if err != nil {
		return nil, err
	}
	base, cred := dirs.Base, dirs.Cred
	m := &Instance{bin: bin, dataDir: filepath.Join(base, "data"), Dir: dirs, keep: server.Lookup(opts.Getenv, KeepCountsEnv)}
	ok := false
	defer func() {
		if !ok {
			m.Stop()
		}
	}()
	if m.port, err = server.FreePort(); err != nil {
		return nil, err
	}
	m.options = map[string]string{
		"datadir":      m.dataDir,
		"socket":       m.Socket(),
		"port":         strconv.Itoa(m.port),
		"bind_address": "127.0.0.1",
		"pid_file":     filepath.Join(base, pidFile),
		"log_error":    m.ErrorLog(),
		// Its own, not $TMPDIR, which the server's user may not write.
		"tmpdir": base,
	}
	maps.Copy(m.options, mariadbSettings)
	maps.Copy(m.options, opts.Settings)
	if err := m.writeOptions(); err != nil {
		return nil, err
	}
	m.password = server.NewPassword()
	if err := m.writeClientFile(); err != nil {
		return nil, err
	}
	// The accounts are settled while the grant tables are made, before
	// the server ever listens: see accountsSQL.
	accounts := filepath.Join(base, "accounts.sql")
	if err := server.WritePrivate(accounts, accountsSQL(m.password), uid, gid); err != nil {
		return nil, err
	}
	logf("mariadb-install-db %s", m.dataDir)
	install := exec.CommandContext(ctx, installDB, "--defaults-file="+m.optionFile(), "--auth-root-authentication-method=normal",
		"--skip-test-db", "--skip-name-resolve", "--extra-file="+accounts)
	install.Dir = base
	install.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Credential: cred}
	out, err := install.CombinedOutput()
	os.Remove(accounts)
	if err != nil {
		first, _, _ := strings.Cut(strings.TrimSpace(server.Redact(string(out), m.password)), "\n\n")
		return nil, fmt.Errorf("mariadb-install-db: %w: %s\nerror log:\n%s", err, first, server.Redact(m.logTail(), m.password))
	}
	if err := m.start(ctx); err != nil {
		return nil, err
	}
	ok = true
	logf("mariadb running on 127.0.0.1:%d and %s", m.port, m.Socket())
	return m, nil
}

func (m *Instance) optionFile() string { return filepath.Join(m.Base, "my.cnf") }

// accountsSQL settles the accounts mariadb-install-db creates (it runs
// the statements in its bootstrap, where grant tables are written
// directly and ALTER USER is not available). With
// --auth-root-authentication-method=normal it creates root@localhost,
// root@127.0.0.1, root@::1 and root@<host name>, all without a password:
// any account on the machine could log in over TCP as root. Only
// root@localhost stays (with skip_name_resolve, `localhost` is the unix
// socket only), with a password; mariadb.sys@localhost stays too: it is
// locked (it cannot log in) and is the definer of mysql.user and the sys
// views, which break without it.
func accountsSQL(password string) string {
	return `DELETE FROM mysql.global_priv WHERE NOT (User = 'root' AND Host = 'localhost') AND User <> 'mariadb.sys';
DELETE FROM mysql.proxies_priv WHERE NOT (User = 'root' AND Host = 'localhost');
UPDATE mysql.global_priv SET Priv = JSON_SET(Priv, '$.plugin', 'mysql_native_password', '$.authentication_string', PASSWORD('` + password + `')) WHERE User = 'root' AND Host = 'localhost';
`
}

// clientFile is the option file the mariadb client reads the socket,
// root and its password from (0600, in the private directory): how
// obsbench's own statements reach the server without the password on a
// command line.
func (m *Instance) clientFile() string { return filepath.Join(m.Base, "client.cnf") }

func (m *Instance) writeClientFile() error {
	content := fmt.Sprintf("[client]\nuser = root\npassword = %s\nsocket = %s\n", m.password, m.Socket())
	return server.WritePrivate(m.clientFile(), content, -1, -1)
}

// writeOptions writes the option file the server starts with.
func (m *Instance) writeOptions() error {
	var b strings.Builder
	b.WriteString("# obsbench managed server\n[mariadbd]\n")
	for _, k := range slices.Sorted(maps.Keys(m.options)) {
		fmt.Fprintf(&b, "%s = %s\n", strings.ReplaceAll(k, "_", "-"), m.options[k])
	}
	return os.WriteFile(m.optionFile(), []byte(b.String()), 0o644)
}

// SetOption sets a startup option (value nil: removes it) for the next
// start: how options that only a restart changes, such as
// performance_schema, are applied on a managed server.
func (m *Instance) SetOption(name string, value *string) error {
	if value == nil {
		delete(m.options, name)
		if v, ok := mariadbSettings[name]; ok {
			m.options[name] = v
		}
	} else {
		m.options[name] = *value
	}
	return m.writeOptions()
}

// Option is a startup option's value in the option file, if set there.
func (m *Instance) Option(name string) (string, bool) {
	v, ok := m.options[name]
	return v, ok
}

// DSN is a go-sql-driver/mysql DSN for database db over the unix socket,
// without the password: the text is safe to print. Connect with Config,
// or give Password to the driver's configuration.
func (m *Instance) DSN(db string) string {
	return fmt.Sprintf("root@unix(%s)/%s", m.Socket(), db)
}

// Password is root@localhost's password, for a driver's configuration
// (never for a DSN's text, which reaches logs).
func (m *Instance) Password() string { return m.password }

// Config is the driver's configuration for database db over the unix
// socket as root, password included.
func (m *Instance) Config(db string) *mysql.Config {
	cfg := mysql.NewConfig()
	cfg.User, cfg.Passwd = "root", m.password
	cfg.Net, cfg.Addr, cfg.DBName = "unix", m.Socket(), db
	return cfg
}

// DataDir is the server's data directory (datadir).
func (m *Instance) DataDir() string { return m.dataDir }

// Socket is the server's unix socket.
func (m *Instance) Socket() string { return filepath.Join(m.Base, "mariadbd.sock") }

// Port is the TCP port on 127.0.0.1.
func (m *Instance) Port() int { return m.port }

// ErrorLog is the server's error log.
func (m *Instance) ErrorLog() string { return filepath.Join(m.Base, "error.log") }

// PID is the server's process id.
func (m *Instance) PID() (int, error) {
	if m.cmd == nil || m.cmd.Process == nil {
		return 0, errors.New("mariadb is not running")
	}
	return m.cmd.Process.Pid, nil
}

// ServerFaults counts the writes its slow directories refused.
func (m *Instance) ServerFaults() (int64, string) { return m.Refused() }

// start runs mariadbd in its own process group (a Ctrl-C reaches obsbench
// only, which reverts first and then stops the server) and waits until it
// accepts connections on its socket.
func (m *Instance) start(ctx context.Context) error {
	argv := []string{m.bin, "--defaults-file=" + m.optionFile()}
	m.counted = m.counter != nil
	if m.counted {
		argv = slices.Concat(m.counter, argv, countedMariaDBOptions)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = m.Base
	if m.counted {
		// valgrind writes a file of its own in TMPDIR as it starts: the
		// server's count directory is one its account can write to,
		// which the caller's TMPDIR need not be, and no other can read.
		cmd.Env = append(os.Environ(), "TMPDIR="+filepath.Join(m.Base, server.CountDir), server.StackShiftVar(m.shift))
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Credential: m.Cred}
	if m.Mounted() {
		slowfs.CloseFuseOnExec()
	}
	// Where this start's lines begin in the error log.
	var logStart int64
	if st, err := os.Stat(m.ErrorLog()); err == nil {
		logStart = st.Size()
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start mariadbd: %w", err)
	}
	m.cmd, m.exited = cmd, make(chan struct{})
	go func(done chan struct{}) { cmd.Wait(); close(done) }(m.exited)
	// The socket accepts before start-up has finished, and a server
	// stopped in between ignores SIGTERM until then (a 30 s hang at the
	// next stop): ready is the error log's "ready for connections".
	exited := false // nothing left to stop
	err := poll.Until(ctx, 120*time.Second, 50*time.Millisecond, func() (bool, error) {
		select {
		case <-m.exited:
			exited = true
			return false, fmt.Errorf("mariadbd exited at start\nerror log:\n%s", m.logTail())
		default:
		}
		c, err := server.DialUnix(m.Socket())
		if err != nil {
			return false, nil
		}
		c.Close()
		return logHas(m.ErrorLog(), logStart, "ready for connections"), nil
	}, func() error {
		return fmt.Errorf("mariadbd did not accept connections within 120s\nerror log:\n%s", m.logTail())
	})
	if err != nil && !exited {
		m.stop()
	}
	return err
}

// stop shuts the server down: SIGTERM is MariaDB's normal shutdown. After
// 30 s it is killed, and the error log's tail logged: the server is
// disposable, and a restart after a kill recovers as after a crash.
func (m *Instance) stop() {
	if m.cmd == nil {
		return
	}
	defer func() { m.cmd = nil }()
	m.endedPID = 0
	if m.counted {
		m.endedPID = m.cmd.Process.Pid
	}
	select {
	case <-m.exited:
		return
	default:
	}
	_ = m.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-m.exited:
	case <-time.After(30 * time.Second):
		_ = m.cmd.Process.Kill()
		<-m.exited
		m.Log("mariadbd did not shut down within 30s; killed. Error log:\n%s", m.logTail())
	}
}

// Restart stops the server and starts it again with the option file as it
// is now, which is how options such as performance_schema change.
func (m *Instance) Restart(ctx context.Context) error {
	m.stop()
	return m.start(ctx)
}

// Stop shuts the server down and removes its directory. It is safe to call
// more than once and on a partly started server.
func (m *Instance) Stop() error {
	if m.Base == "" {
		return nil
	}
	m.stop()
	err := m.CloseMounts()
	if rmErr := os.RemoveAll(m.Base); rmErr != nil && err == nil {
		err = rmErr
	}
	m.Base = ""
	return err
}

// logHas says whether the file at path holds text after offset.
func logHas(path string, offset int64, text string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	b, err := io.ReadAll(io.NewSectionReader(f, offset, 1<<30))
	return err == nil && strings.Contains(string(b), text)
}

func (m *Instance) logTail() string { return server.FileTail(m.ErrorLog(), 15) }
