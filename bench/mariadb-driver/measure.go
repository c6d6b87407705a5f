package main

import (
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
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/obsbench/obsbench/bench/internal/driverpeer"
	"github.com/obsbench/obsbench/bench/internal/sidebyside"
	"github.com/obsbench/obsbench/internal/cgroup"
	"github.com/obsbench/obsbench/internal/collect"
	"github.com/obsbench/obsbench/internal/engine/mariadb"
)

// mariadbd is the managed MariaDB of the rounds as driverpeer measures
// it: its one process, and a connection for WaitIdle's queries.
type mariadbd struct {
	pid     int
	control *sql.DB // one connection, kept for the whole bench
}

// WaitIdle waits until no session but its own is connected to the
// benchmark database, so that the previous run's sessions are not
// measured with the next.
func (m mariadbd) WaitIdle(ctx context.Context) error {
	db := m.control
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

// StartCPU measures mariadbd's CPU.
func (m mariadbd) StartCPU() (func() (float64, error), error) {
	cpu0, err := collect.ProcessCPU(m.pid)
	if err != nil {
		return nil, err
	}
	return func() (float64, error) {
		cpu1, err := collect.ProcessCPU(m.pid)
		return cpu1 - cpu0, err
	}, nil
}

// sysbench is the peer: sysbench running the query's Lua script.
type sysbench struct {
	path    string
	threads int // one per session
}

var reEvents = regexp.MustCompile(`(?m)^\s*total number of events:\s+(\d+)`)

// run is sysbench with files (a server's) as a tool, in group when there
// is one (a duet's twin). Each event is one execution of the prepared
// statement; statements/s is events ÷ d, the driver's count over the same
// nominal duration.
func (sb sysbench) run(files sysbenchFiles, group *cgroup.Group) driverpeer.Tool {
	return func(ctx context.Context, d time.Duration, s *sidebyside.Sample) error {
		cmd := exec.CommandContext(ctx, sb.path, "--config-file="+files.options, files.script,
			"--threads="+strconv.Itoa(sb.threads), "--time="+strconv.Itoa(int(d/time.Second)), "run")
		out, cpu, err := sidebyside.RunPeer(cmd, group)
		if err != nil || s == nil {
			return err
		}
		m := reEvents.FindSubmatch(out)
		if m == nil {
			return fmt.Errorf("cannot parse sysbench's output:\n%s", out)
		}
		s.Rated, _ = strconv.ParseInt(string(m[1]), 10, 64)
		s.Executed = s.Rated
		s.ClientCPU = cpu.Seconds()
		return nil
	}
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

func writeSysbenchFiles(query string, m *mariadb.Instance) (sysbenchFiles, error) {
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

// openControl opens the pool of one connection that WaitIdle queries
// through, kept for the whole bench.
func openControl(m *mariadb.Instance) (*sql.DB, error) {
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
