package collect

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"time"
)

// TaskClock reads the CPU time one server process or thread has used so
// far, from /proc/<id>/schedstat: its first field is the task's time on a
// CPU in nanoseconds, user and kernel together, kept by the scheduler
// (not sampled in clock ticks as /proc/<id>/stat is, whose 10 ms steps
// are the size of a whole short statement). Reading it costs the reader
// a pread of an open file, a few microseconds (BenchmarkTaskClock), and
// the task nothing.
//
// A thread id works as well as a process id: /proc/<tid> exists for every
// thread though only processes are listed.
type TaskClock struct {
	f   *os.File
	buf [64]byte
}

// OpenTaskClock opens the clock of task id (a process or thread of this
// machine).
func OpenTaskClock(id int) (*TaskClock, error) {
	if id <= 0 {
		return nil, fmt.Errorf("task clock: no task id (%d)", id)
	}
	f, err := os.Open("/proc/" + strconv.Itoa(id) + "/schedstat")
	if err != nil {
		return nil, fmt.Errorf("task clock: %w", err)
	}
	c := &TaskClock{f: f}
	if _, err := c.Read(); err != nil {
		f.Close()
		return nil, err
	}
	return c, nil
}

// Read returns the task's CPU time so far.
func (c *TaskClock) Read() (time.Duration, error) {
	n, err := c.f.ReadAt(c.buf[:], 0)
	if n == 0 {
		return 0, fmt.Errorf("task clock: read %s: %w", c.f.Name(), err)
	}
	field, _, _ := bytes.Cut(c.buf[:n], []byte{' '})
	ns, perr := strconv.ParseInt(string(field), 10, 64)
	if perr != nil {
		return 0, fmt.Errorf("task clock: %s: %q is not a count of nanoseconds", c.f.Name(), field)
	}
	return time.Duration(ns), nil
}

// Close closes the clock's file.
func (c *TaskClock) Close() error { return c.f.Close() }
