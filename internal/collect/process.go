package collect

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// Started is when process pid of this machine started, and its command
// name, from /proc/<pid>/stat (its start in clock ticks after boot) and
// /proc/stat (the boot's time): with a server's own word for when a
// process of its started, what tells one of this machine's processes from
// a process of the same id on another machine. To about a second: the
// boot time is in whole seconds.
func Started(pid int) (comm string, at time.Time, err error) { return started("/proc", pid) }

func started(proc string, pid int) (string, time.Time, error) {
	b, err := os.ReadFile(filepath.Join(proc, strconv.Itoa(pid), "stat"))
	if err != nil {
		return "", time.Time{}, err
	}
	// The command name (field 2) is in parentheses and may hold either;
	// the fields after it start after the last ')'.
	open, end := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
	if open < 0 || end < open {
		return "", time.Time{}, fmt.Errorf("malformed %s/%d/stat", proc, pid)
	}
	f := bytes.Fields(b[end+1:])
	if len(f) < 20 {
		return "", time.Time{}, fmt.Errorf("malformed %s/%d/stat", proc, pid)
	}
	ticks, err := strconv.ParseInt(string(f[19]), 10, 64) // field 22, starttime
	if err != nil {
		return "", time.Time{}, fmt.Errorf("%s/%d/stat: start %q: %w", proc, pid, f[19], err)
	}
	boot, err := bootTime(proc)
	if err != nil {
		return "", time.Time{}, err
	}
	return string(b[open+1 : end]), boot.Add(time.Duration(ticks) * time.Second / userHZ), nil
}

// bootTime is the machine's boot, from the btime line of /proc/stat.
func bootTime(proc string) (time.Time, error) {
	b, err := os.ReadFile(filepath.Join(proc, "stat"))
	if err != nil {
		return time.Time{}, err
	}
	for line := range bytes.Lines(b) {
		if v, ok := bytes.CutPrefix(line, []byte("btime ")); ok {
			sec, err := strconv.ParseInt(string(bytes.TrimSpace(v)), 10, 64)
			if err != nil {
				return time.Time{}, fmt.Errorf("%s/stat: btime %q: %w", proc, v, err)
			}
			return time.Unix(sec, 0), nil
		}
	}
	return time.Time{}, fmt.Errorf("%s/stat has no btime", proc)
}

// ThreadGroup is the process that thread id of this machine belongs to,
// 0 if unknown (a thread's id opens /proc as a process's does).
func ThreadGroup(id int) int { return threadGroup(id) }
