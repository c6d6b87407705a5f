package collect

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// A process's start is the boot's time and its start ticks; its name is
// between the first '(' and the last ')', whatever it holds.
func TestStarted(t *testing.T) {
	proc := t.TempDir()
	write := func(name, text string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(filepath.Join(proc, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(proc, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("stat", "cpu  1 2 3 4\nbtime 1700000000\nprocesses 9\n")
	// Field 22 (starttime) is 12345 ticks: 123.45 s after boot.
	write("42/stat", "42 (post gres) S 1 42 42 0 -1 4194560 100 0 0 0 5 6 0 0 20 0 1 0 12345 1000 10 18446744073709551615\n")
	write("43/stat", "43 (odd) name) S 1")
	comm, at, err := started(proc, 42)
	if want := time.Unix(1700000000, 0).Add(123450 * time.Millisecond); err != nil || comm != "post gres" || !at.Equal(want) {
		t.Errorf("started(42) = %q, %v, %v; want \"post gres\", %v", comm, at, err, want)
	}
	for _, pid := range []int{43, 44} {
		if _, _, err := started(proc, pid); err == nil {
			t.Errorf("started(%d): no error; want one (malformed, or no such process)", pid)
		}
	}
	if g := ThreadGroup(os.Getpid()); g != os.Getpid() {
		t.Errorf("ThreadGroup(self) = %d; want %d", g, os.Getpid())
	}
	// This process, read from the real /proc: it started before now.
	if comm, at, err := Started(os.Getpid()); err != nil || comm == "" || at.After(time.Now()) {
		t.Errorf("Started(self) = %q, %v, %v", comm, at, err)
	}
}
