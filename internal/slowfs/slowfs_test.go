package slowfs_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/obsbench/obsbench/internal/slowfs"
)

// Writes under the mount land in the backing directory and each waits the
// delay; reads do not.
func TestWritesAreDelayed(t *testing.T) {
	base := t.TempDir()
	dir, backing := filepath.Join(base, "mnt"), filepath.Join(base, "backing")
	for _, d := range []string{dir, backing} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	const delay = 20 * time.Millisecond
	m, err := slowfs.New(dir, backing, delay)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := m.Close(); err != nil {
			t.Error(err)
		}
	}()
	f, err := os.OpenFile(filepath.Join(dir, "log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	const writes = 10
	start := time.Now()
	for i := 0; i < writes; i++ {
		if _, err := f.WriteString("a line\n"); err != nil {
			t.Fatal(err)
		}
	}
	took := time.Since(start)
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if took < writes*delay {
		t.Errorf("%d writes took %v, want at least %v", writes, took, writes*delay)
	}
	if got := m.Writes(); got != writes {
		t.Errorf("mount counted %d writes, want %d", got, writes)
	}
	b, err := os.ReadFile(filepath.Join(backing, "log"))
	if err != nil {
		t.Fatal(err)
	}
	if len(b) != writes*len("a line\n") {
		t.Errorf("backing file has %d bytes, want %d", len(b), writes*len("a line\n"))
	}
}

// A full device: writes past its capacity fail with ENOSPC.
func TestCapacity(t *testing.T) {
	base := t.TempDir()
	dir, backing := filepath.Join(base, "mnt"), filepath.Join(base, "backing")
	os.Mkdir(dir, 0o755)
	os.Mkdir(backing, 0o755)
	m, err := slowfs.NewFull(dir, backing, time.Microsecond, 100)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	f, err := os.OpenFile(filepath.Join(dir, "log"), os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(make([]byte, 80)); err != nil {
		t.Fatalf("first 80 bytes: %v", err)
	}
	if _, err := f.Write(make([]byte, 40)); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("write past capacity: %v; want ENOSPC", err)
	}
	if m.Refused() != 1 {
		t.Errorf("Refused = %d; want 1", m.Refused())
	}
}

// A process started after the mount does not inherit the FUSE connection.
func TestChildrenDoNotInheritFuse(t *testing.T) {
	base := t.TempDir()
	dir, backing := filepath.Join(base, "mnt"), filepath.Join(base, "backing")
	os.Mkdir(dir, 0o755)
	os.Mkdir(backing, 0o755)
	m, err := slowfs.New(dir, backing, time.Microsecond)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	out, err := exec.Command("sh", "-c", "ls -l /proc/self/fd/").Output()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(out), "/dev/fuse") {
		t.Errorf("a child process holds /dev/fuse:\n%s", out)
	}
}
