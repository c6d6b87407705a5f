package mariadb_test

import (
	"database/sql"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/obsbench/obsbench/internal/engine/servertest"
)

func TestMariaDBStartRestartStop(t *testing.T) {
	ctx, m := servertest.StartMariaDB(t, 3*time.Minute)
	query := func(cfg *mysql.Config, q string) string {
		t.Helper()
		db := servertest.Open(t, cfg)
		defer db.Close()
		var v string
		if err := db.QueryRowContext(ctx, q).Scan(&v); err != nil {
			t.Fatalf("%s on %s: %v", q, cfg.Addr, err)
		}
		return v
	}
	// Reachable on the socket as root with its password, with the
	// benchmark's buffer pool and performance_schema off; root listens
	// on loopback TCP but has no account there.
	if got := query(m.Config("mysql"), "SELECT CONCAT(@@innodb_buffer_pool_size, ' ', @@performance_schema, ' ', @@bind_address)"); got != "268435456 OFF 127.0.0.1" {
		t.Errorf("buffer pool, performance_schema, bind address = %q", got)
	}
	tcp := m.Config("mysql")
	tcp.Net, tcp.Addr = "tcp", "127.0.0.1:"+strconv.Itoa(m.Port())
	if c, err := mysql.NewConnector(tcp); err == nil {
		db := sql.OpenDB(c)
		if err := db.PingContext(ctx); err == nil || !strings.Contains(err.Error(), "not allowed to connect") {
			t.Errorf("root over TCP with the password: %v; want no account for 127.0.0.1", err)
		}
		db.Close()
	}
	pid, err := m.PID()
	if err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() == 0 && servertest.ProcessUID(t, pid) == "0" {
		t.Errorf("mariadbd %d runs as root", pid)
	}

	// A startup option takes effect with a restart, and is gone after it
	// is removed and the server restarted again.
	on := "ON"
	if err := m.SetOption("performance_schema", &on); err != nil {
		t.Fatal(err)
	}
	if err := m.Restart(ctx); err != nil {
		t.Fatalf("Restart: %v", err)
	}
	if got := query(m.Config("mysql"), "SELECT @@performance_schema"); got != "1" {
		t.Errorf("performance_schema after restart = %s, want 1", got)
	}
	if err := m.SetOption("performance_schema", nil); err != nil {
		t.Fatal(err)
	}
	if err := m.Restart(ctx); err != nil {
		t.Fatalf("Restart: %v", err)
	}
	if got := query(m.Config("mysql"), "SELECT @@performance_schema"); got != "0" {
		t.Errorf("performance_schema after removing the option = %s, want 0", got)
	}

	base := filepath.Dir(m.Socket())
	if err := m.Stop(); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if _, err := os.Stat(base); !os.IsNotExist(err) {
		t.Errorf("server directory %s still exists after Stop", base)
	}
	if _, err := os.Stat("/proc/" + strconv.Itoa(pid)); err == nil {
		t.Errorf("mariadbd %d still running after Stop", pid)
	}
}
