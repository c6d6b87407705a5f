package server

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// ReapStale stops and removes managed servers whose obsbench process is gone
// (killed with SIGKILL, or the machine's session ended), so that a crash does
// not leave servers running and temp directories filling the disk. A
// directory is one of obsbench's servers when it has an ownerFile and a
// reapFile (NewDir); the reapFile says where the server's process id is
// and which signal stops it at once (its files are disposable: nothing
// to flush).
func ReapStale(logf func(format string, args ...any)) {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), "obsbench-*"))
	for _, dir := range dirs {
		owner, err := ReadPID(filepath.Join(dir, ownerFile))
		if err != nil || Alive(owner) {
			continue
		}
		spec, err := os.ReadFile(filepath.Join(dir, reapFile))
		if err != nil {
			continue
		}
		pidFile, sig, ok := parseReap(string(spec))
		if !ok {
			continue
		}
		if pid, err := ReadPID(filepath.Join(dir, pidFile)); err == nil && Alive(pid) {
			logf("stopping server process %d in %s, left by obsbench process %d", pid, dir, owner)
			_ = syscall.Kill(pid, sig)
			for i := 0; i < 100 && Alive(pid); i++ {
				time.Sleep(100 * time.Millisecond)
			}
		}
		unmountAll(dir, logf)
		logf("removing %s left by obsbench process %d", dir, owner)
		_ = os.RemoveAll(dir)
	}
}

// parseReap reads a reapFile: the server's PID file, relative to its
// directory, and the signal's number, a line each; a signal other than
// one that stops a server is refused.
func parseReap(text string) (pidFile string, sig syscall.Signal, ok bool) {
	fields := strings.Split(strings.TrimSpace(text), "\n")
	if len(fields) != 2 || fields[0] == "" || filepath.IsAbs(fields[0]) || strings.Contains(fields[0], "..") {
		return "", 0, false
	}
	n, err := strconv.Atoi(strings.TrimSpace(fields[1]))
	switch sig = syscall.Signal(n); {
	case err != nil:
		return "", 0, false
	case sig == syscall.SIGQUIT, sig == syscall.SIGKILL, sig == syscall.SIGTERM:
		return fields[0], sig, true
	}
	return "", 0, false
}

// ReadPID reads the process id on the first line of a PID file.
func ReadPID(path string) (int, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	line, _, _ := bytes.Cut(b, []byte("\n"))
	return strconv.Atoi(strings.TrimSpace(string(line)))
}

// Alive reports whether pid is a running process; a zombie (exited, not yet
// reaped by its parent) is not.
func Alive(pid int) bool {
	if pid <= 0 {
		return false
	}
	if err := syscall.Kill(pid, 0); err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(b, ')')
	return i < 0 || i+2 >= len(b) || b[i+2] != 'Z'
}
