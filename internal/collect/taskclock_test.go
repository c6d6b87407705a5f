package collect

import (
	"errors"
	"io/fs"
	"os"
	"runtime"
	"syscall"
	"testing"
	"time"
)

// The clock of this thread advances by about the CPU time a busy loop
// spends, and not while the thread sleeps.
func TestTaskClock(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	c, err := OpenTaskClock(syscall.Gettid())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	t0, _ := c.Read()
	time.Sleep(50 * time.Millisecond)
	t1, _ := c.Read()
	if d := t1 - t0; d > 10*time.Millisecond {
		t.Errorf("clock advanced %v while the thread slept 50ms", d)
	}
	var r syscall.Rusage
	syscall.Getrusage(1 /* RUSAGE_THREAD */, &r)
	ru0 := time.Duration(r.Utime.Nano() + r.Stime.Nano())
	spin := time.Now()
	x := 0
	for time.Since(spin) < 100*time.Millisecond {
		x++
	}
	t2, err := c.Read()
	if err != nil {
		t.Fatal(err)
	}
	syscall.Getrusage(1, &r)
	ru := time.Duration(r.Utime.Nano()+r.Stime.Nano()) - ru0
	if d := t2 - t1; d < ru/2 || d > 2*ru+10*time.Millisecond {
		t.Errorf("clock advanced %v over a loop that used %v of CPU (rusage)", d, ru)
	}
	_ = x
}

func TestTaskClockErrors(t *testing.T) {
	if _, err := OpenTaskClock(0); err == nil {
		t.Error("task 0: no error")
	}
	if _, err := OpenTaskClock(1 << 30); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("task 1<<30: %v; want a not-exist error", err)
	}
}

// BenchmarkTaskClock is what reading a server task's clock costs the
// driver per read (twice per statement).
func BenchmarkTaskClock(b *testing.B) {
	c, err := OpenTaskClock(os.Getpid())
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	for b.Loop() {
		if _, err := c.Read(); err != nil {
			b.Fatal(err)
		}
	}
}
