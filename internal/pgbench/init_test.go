package pgbench

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/obsbench/obsbench/internal/engine/postgres"
)

// InitWithPgbench makes pgbench's tables at scale in pg's database
// postgres with the installed pgbench -i (exported for the external
// tests).
func InitWithPgbench(t *testing.T, pg *postgres.Instance, scale int) {
	t.Helper()
	init := exec.Command(filepath.Join(pg.BinDir(), "pgbench"), "-i", "-s", strconv.Itoa(scale), "-q", pg.DSN("postgres"))
	init.Env = append(os.Environ(), "LC_ALL=C")
	if out, err := init.CombinedOutput(); err != nil {
		t.Fatalf("pgbench -i: %v\n%s", err, out)
	}
}
