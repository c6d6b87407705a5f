package main

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/obsbench/obsbench/bench/internal/sidebyside"
	"github.com/obsbench/obsbench/internal/cgroup"
	"github.com/obsbench/obsbench/internal/collect"
	"github.com/obsbench/obsbench/internal/driver"
	"github.com/obsbench/obsbench/internal/engine/mariadb"
	"github.com/obsbench/obsbench/internal/server"
	"github.com/obsbench/obsbench/internal/workload"
)

const (
	toolDriver     = "obsbench"
	toolGoroutines = "obsbench-goroutines" // the driver with a goroutine per session (-goroutines)
	toolSysbench   = "sysbench"
)

// bench is what both tools run against.
type bench struct {
	srv              *mariadb.Server
	m                *server.MariaDB
	wl               workload.Meta
	pid              int // mariadbd
	clients, procs   int
	warmup, duration time.Duration
	sysbench         string
	files            sysbenchFiles
	control          *sql.DB // one connection for waitIdle's queries
}

// sample is one measured run of one tool.
type sample = sidebyside.Sample

// measure runs tool's warm-up, then its measured run, and returns the
// measured run. Each run opens and closes its own sessions; the CPU times
// cover the whole measured run, connecting and preparing included.
func (b *bench) measure(ctx context.Context, tool string) (sample, error) {
	s := sample{Tool: tool, Seconds: b.duration.Seconds()}
	runTool := b.runDriver
	switch tool {
	case toolSysbench:
		runTool = b.runSysbench
	case toolGoroutines:
		runTool = b.runGoroutines
	}
	if b.warmup > 0 {
		if err := runTool(ctx, b.warmup, nil); err != nil {
			return s, fmt.Errorf("warm-up: %w", err)
		}
	}
	if err := b.waitIdle(ctx); err != nil {
		return s, err
	}
	srv0, err := collect.ProcessCPU(b.pid)
	if err != nil {
		return s, err
	}
	if err := runTool(ctx, b.duration, &s); err != nil {
		return s, err
	}
	werr := b.waitIdle(ctx)
	srv1, err := collect.ProcessCPU(b.pid)
	s.ServerCPU = srv1 - srv0
	return s, errors.Join(werr, err)
}

// runDriver runs the driver for d (sidebyside.RunDriver), its sessions on
// event loops as obsbench run does.
func (b *bench) runDriver(ctx context.Context, d time.Duration, s *sample) error {
	return b.drive(ctx, driver.Config{Clients: b.clients, Duration: d, Procs: b.procs}, s)
}

// runGoroutines runs the driver for d with a goroutine per session.
func (b *bench) runGoroutines(ctx context.Context, d time.Duration, s *sample) error {
	return b.drive(ctx, driver.Config{Clients: b.clients, Duration: d, Procs: b.procs, Goroutines: true}, s)
}

func (b *bench) drive(ctx context.Context, cfg driver.Config, s *sample) error {
	dial := func(ctx context.Context) (driver.Session, error) { return b.srv.Connect(ctx) }
	return sidebyside.RunDriver(ctx, cfg, dial, b.wl, s)
}

var reEvents = regexp.MustCompile(`(?m)^\s*total number of events:\s+(\d+)`)

// runSysbench runs sysbench for d with one thread per session. Each event
// is one execution of the prepared statement; statements/s is events ÷ d,
// the driver's count over the same nominal duration.
func (b *bench) runSysbench(ctx context.Context, d time.Duration, s *sample) error {
	return b.runSysbenchIn(ctx, b.files, nil, d, s)
}

// runSysbenchIn runs sysbench with files (a server's), in group if not nil.
func (b *bench) runSysbenchIn(ctx context.Context, files sysbenchFiles, group *cgroup.Group, d time.Duration, s *sample) error {
	cmd := exec.CommandContext(ctx, b.sysbench, "--config-file="+files.options, files.script,
		"--threads="+strconv.Itoa(b.clients), "--time="+strconv.Itoa(int(d/time.Second)), "run")
	// Its own process group: Ctrl-C reaches this program, which cancels ctx.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := sidebyside.RunIn(cmd, group); err != nil {
		return fmt.Errorf("%s: %w\n%s", strings.Join(cmd.Args, " "), err, out.String())
	}
	if s == nil {
		return nil
	}
	m := reEvents.FindSubmatch(out.Bytes())
	if m == nil {
		return fmt.Errorf("cannot parse sysbench's output:\n%s", out.String())
	}
	s.Rated, _ = strconv.ParseInt(string(m[1]), 10, 64)
	s.Executed = s.Rated
	s.ClientCPU = (cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()).Seconds()
	return nil
}

// sysbenchFiles are the Lua script and the option file (it holds the
// password, so it is not on a command line that other accounts can read).
type sysbenchFiles struct{ dir, script, options string }

// sysbenchScript prepares the query once per thread and executes it once
// per event; sysbench reads and frees each result.
const sysbenchScript = `-- written by bench/mariadb-driver: credit-top1's query, prepared once per thread
function thread_init()
  drv = sysbench.sql.driver()
  con = drv:connect()
  stmt = con:prepare([==[%s]==])
end

function event()
  stmt:execute()
end

function thread_done()
  stmt:close()
  con:disconnect()
end
`

func writeSysbenchFiles(query string, m *server.MariaDB) (sysbenchFiles, error) {
	dir, err := os.MkdirTemp("", "obsbench-sysbench-")
	if err != nil {
		return sysbenchFiles{}, err
	}
	f := sysbenchFiles{dir: dir, script: filepath.Join(dir, "credit_top1.lua"), options: filepath.Join(dir, "options")}
	options := fmt.Sprintf("db-driver=mysql\nmysql-socket=%s\nmysql-user=root\nmysql-password=%s\nmysql-db=%s\ndb-ps-mode=auto\n",
		m.Socket(), m.Password(), database)
	err = errors.Join(
		os.WriteFile(f.script, []byte(fmt.Sprintf(sysbenchScript, query)), 0o600),
		os.WriteFile(f.options, []byte(options), 0o600))
	if err != nil {
		os.RemoveAll(dir)
		return sysbenchFiles{}, err
	}
	return f, nil
}

// openControl opens the pool of one connection that waitIdle queries
// through, kept for the whole bench.
func openControl(m *server.MariaDB) (*sql.DB, error) {
	conn, err := mysql.NewConnector(m.Config(database))
	if err != nil {
		return nil, err
	}
	db := sql.OpenDB(conn)
	db.SetMaxOpenConns(1)
	return db, nil
}

func findSysbench() (string, error) {
	path, err := exec.LookPath("sysbench")
	if err != nil {
		return "", fmt.Errorf("sysbench, the peer this bench measures beside obsbench, is not installed: run scripts/install-deps.sh (apt-get install sysbench)")
	}
	return path, nil
}

func sysbenchVersion() string {
	out, err := exec.Command("sysbench", "--version").Output()
	if err != nil {
		return "(version unknown)"
	}
	return strings.TrimPrefix(strings.TrimSpace(string(out)), "sysbench ")
}

// waitIdle waits until no session but its own is connected to the
// benchmark database, so that the previous run's sessions are not
// measured with the next.
func (b *bench) waitIdle(ctx context.Context) error {
	db := b.control
	deadline := time.Now().Add(10 * time.Second)
	for {
		var n int
		err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE DB = ? AND ID <> CONNECTION_ID()", database).Scan(&n)
		if err != nil || n == 0 {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d sessions still connected 10s after the run", n)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}
