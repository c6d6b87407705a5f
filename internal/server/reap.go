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
// not leave servers running and temp directories filling the disk.
func ReapStale(logf func(format string, args ...any)) {
	pg, _ := filepath.Glob(filepath.Join(os.TempDir(), tempPrefix+"*"))
	mdb, _ := filepath.Glob(filepath.Join(os.TempDir(), mariadbPrefix+"*"))
	for _, dir := range append(pg, mdb...) {
		owner, err := readPID(filepath.Join(dir, "owner.pid"))
		if err != nil || alive(owner) {
			continue
		}
		if pm, err := readPID(filepath.Join(dir, "data", "postmaster.pid")); err == nil && alive(pm) {
			logf("stopping postgres %d left by obsbench process %d", pm, owner)
			// SIGQUIT is PostgreSQL's immediate shutdown; the cluster is
			// disposable, so there is nothing to flush.
			_ = syscall.Kill(pm, syscall.SIGQUIT)
			for i := 0; i < 100 && alive(pm); i++ {
				time.Sleep(100 * time.Millisecond)
			}
		}
		if pid, err := readPID(filepath.Join(dir, "mariadbd.pid")); err == nil && alive(pid) {
			logf("stopping mariadb %d left by obsbench process %d", pid, owner)
			_ = syscall.Kill(pid, syscall.SIGKILL) // disposable: nothing to flush
			for i := 0; i < 100 && alive(pid); i++ {
				time.Sleep(100 * time.Millisecond)
			}
		}
		unmountAll(dir, logf)
		logf("removing %s left by obsbench process %d", dir, owner)
		_ = os.RemoveAll(dir)
	}
}

func readPID(path string) (int, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	line, _, _ := bytes.Cut(b, []byte("\n"))
	return strconv.Atoi(strings.TrimSpace(string(line)))
}

// alive reports whether pid is a running process; a zombie (exited, not yet
// reaped by its parent) is not.
func alive(pid int) bool {
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
