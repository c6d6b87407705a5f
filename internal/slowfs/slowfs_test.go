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

	"github.com/obsbench/obsbench/internal/engine/servertest"
	"github.com/obsbench/obsbench/internal/slowfs"
)

// Writes under the mount land in the backing directory and each waits the
// delay; reads do not.
func TestWritesAreDelayed(t *testing.T) {
	skipShort(t)
	dir, backing := mountDirs(t)
	const delay = 20 * time.Millisecond
	m, err := slowfs.New(dir, backing, slowfs.Device{Delay: delay})
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
	skipShort(t)
	dir, backing := mountDirs(t)
	m, err := slowfs.New(dir, backing, slowfs.Device{Delay: time.Microsecond, Capacity: 100})
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
	skipShort(t)
	dir, backing := mountDirs(t)
	m, err := slowfs.New(dir, backing, slowfs.Device{Delay: time.Microsecond})
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

// Another account that reaches the mount point can read and write there
// only what the backing files' owners and modes allow: the kernel checks
// (default_permissions), while the file system itself acts as root. The
// directories here are open to everyone (0755) so that only the mount
// stands between the outsider and a file that only its owner may read.
func TestOtherAccountsGetNoMoreThanTheFilesAllow(t *testing.T) {
	skipShort(t)
	base, err := os.MkdirTemp("", "obsbench-slowfs-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	dir, backing := filepath.Join(base, "mnt"), filepath.Join(base, "backing")
	for _, d := range []string{dir, backing, filepath.Join(backing, "theirs")} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	// A directory of the outsider's own: what it may write (the control
	// that shows the outsider's commands work through the mount).
	if err := os.Chown(filepath.Join(backing, "theirs"), servertest.OutsiderUID(t), -1); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(backing, "server.log"), []byte("SELECT secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	m, err := slowfs.New(dir, backing, slowfs.Device{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()

	log := filepath.Join(dir, "server.log")
	servertest.MustBeRefused(t, []string{"Permission denied"},
		servertest.AsOutsider(t, "reading a 0600 file through the mount", "cat", log),
		servertest.AsOutsider(t, "appending to a 0600 file through the mount", "sh", "-c", "echo x >> "+log),
		servertest.AsOutsider(t, "creating a file in a 0755 directory of root's through the mount", "sh", "-c", "echo x > "+filepath.Join(dir, "new.log")),
	)
	own := servertest.AsOutsider(t, "writing in its own directory through the mount", "sh", "-c", "echo x > "+filepath.Join(dir, "theirs", "own.log"))
	if own.Err != nil {
		t.Errorf("as %s, %s: %v %s; want it allowed", servertest.OutsiderAccount, own.What, own.Err, own.Output)
	}
	if b, err := os.ReadFile(filepath.Join(backing, "server.log")); err != nil || string(b) != "SELECT secret\n" {
		t.Errorf("server.log = %q, %v; want it unchanged", b, err)
	}
}

// skipShort skips t under go test -short: a FUSE mount needs root (the
// mount is direct, without fusermount), and the first tier of the tests
// needs none. Without -short it does nothing.
func skipShort(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("mounts a FUSE file system, which needs root: second tier, not run with -short")
	}
}

// A stalling device: a write sent in a stall waits for its end, and one
// sent between stalls only the delay.
func TestStalls(t *testing.T) {
	skipShort(t)
	dir, backing := mountDirs(t)
	const stall, every = 150 * time.Millisecond, 300 * time.Millisecond
	m, err := slowfs.New(dir, backing, slowfs.Device{Delay: time.Microsecond, Stall: stall, StallEvery: every})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	f, err := os.OpenFile(filepath.Join(dir, "log"), os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var slow, fast int
	for end := time.Now().Add(4 * every); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		start := time.Now()
		if _, err := f.Write([]byte("a line\n")); err != nil {
			t.Fatal(err)
		}
		switch took := time.Since(start); {
		case took > stall/3:
			slow++
		case took < stall/10:
			fast++
		}
	}
	if slow < 3 || fast < 10 {
		t.Errorf("%d writes waited a stall and %d did not; want at least 3 (a stall begins every %v) and 10", slow, fast, every)
	}
	if m.Stalled() < int64(slow) {
		t.Errorf("Stalled = %d; want at least the %d writes seen waiting", m.Stalled(), slow)
	}
}

// mountDirs makes a mount point and a backing directory for a test's
// slow directory.
func mountDirs(t *testing.T) (dir, backing string) {
	t.Helper()
	base := t.TempDir()
	dir, backing = filepath.Join(base, "mnt"), filepath.Join(base, "backing")
	for _, d := range []string{dir, backing} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir, backing
}
