package server

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/obsbench/obsbench/internal/poll"
)

// ErrNoValgrind is returned when instructions are to be counted and
// valgrind is not installed.
var ErrNoValgrind = errors.New("valgrind not found (apt-get install valgrind; make install-deps installs it)")

// ProcessCount is the user-space instructions one server process
// executed, from its start (or fork) to its exit.
type ProcessCount struct {
	PID          int
	Instructions uint64
}

// countDir is where a counted server's processes write their counts.
const countDir = "counts"

// CountInstructions makes the server's next start or restart run under
// valgrind's instruction counter (cachegrind without its cache
// simulation): every process, the postmaster and each process it forks,
// writes the user-space instructions it executed when it exits (Counts).
// on=false makes the next start run the server as it is. It changes
// nothing until a restart.
func (p *Postgres) CountInstructions(on bool) error {
	if !on {
		p.counter = ""
		return nil
	}
	valgrind, err := exec.LookPath("valgrind")
	if err != nil {
		return ErrNoValgrind
	}
	dir := filepath.Join(p.base, countDir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	uid, gid := os.Geteuid(), os.Getegid()
	if p.cred != nil {
		uid, gid = int(p.cred.Uid), int(p.cred.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			return err
		}
	}
	// pg_ctl starts the program -p names with postgres's arguments: a
	// script that puts valgrind before them. -q: valgrind's own notes
	// would go to the server's stderr stream. TMPDIR: valgrind writes a
	// file of its own there as it starts, which the caller's TMPDIR may
	// not let the server's account do; the count directory does, and no
	// other account can read it. The settings leave nothing in a
	// session's work to timing: no parallel query (a parallel plan splits
	// a query's work between the session's backend and workers by who gets
	// to each page first; without it a query's work is its backend's
	// alone) and no autovacuum (a worker that vacuums or analyzes a table
	// while a session runs sends it invalidations, so that it plans again,
	// or sets hint bits the session would have set).
	wrapper := filepath.Join(p.base, "postgres-counted")
	script := fmt.Sprintf("#!/bin/sh\nTMPDIR=%[2]s exec %[1]s -q --tool=cachegrind --cache-sim=no --branch-sim=no --vgdb=no --cachegrind-out-file=%[2]s/cg.%%p %[3]s \"$@\" -c max_parallel_workers_per_gather=0 -c autovacuum=off\n",
		shellQuote(valgrind), shellQuote(dir), shellQuote(filepath.Join(p.binDir, "postgres")))
	if err := writePrivate(wrapper, script, uid, gid); err != nil {
		return err
	}
	if err := os.Chmod(wrapper, 0o700); err != nil {
		return err
	}
	p.counter = wrapper
	return nil
}

// ShiftStack makes the counted lifetimes started from now on begin their
// stacks bytes lower than the others: pg_ctl, and so the postmaster, gets
// an environment that much longer (stackShiftVar). The backends, forked
// from the postmaster, inherit its stack.
func (p *Postgres) ShiftStack(bytes int) { p.shift = bytes }

// stackShiftVar is an environment variable that takes the given bytes more
// than one of no length would: the kernel puts the environment's strings
// at the top of a new program's stack, so its stack begins that much
// lower, and everything on it lies elsewhere relative to pages and cache
// lines.
func stackShiftVar(bytes int) string {
	return "OBSBENCH_STACK_SHIFT=" + strings.Repeat("x", bytes)
}

// Counts are the counts of the processes that exited since the last
// ClearCounts, by process id. A process that is still running, or still
// writing its count as it exits, has none yet.
func (p *Postgres) Counts() (map[int]uint64, error) {
	files, err := filepath.Glob(filepath.Join(p.base, countDir, "cg.*"))
	if err != nil {
		return nil, err
	}
	if p.counted == nil {
		p.counted = map[int]uint64{}
	}
	for _, f := range files {
		pid, err := strconv.Atoi(strings.TrimPrefix(filepath.Base(f), "cg."))
		if err != nil {
			continue
		}
		if _, ok := p.counted[pid]; ok {
			continue
		}
		n, done, err := cachegrindTotal(f)
		if err != nil {
			return nil, err
		}
		if done {
			p.counted[pid] = n
		}
	}
	return maps.Clone(p.counted), nil
}

// countedPostmaster is the process id of the running postmaster if it runs
// under the counter, else 0.
func (p *Postgres) countedPostmaster() int {
	if !p.countedLife {
		return 0
	}
	pm, _ := p.PID()
	return pm
}

// waitCount waits for the count of postmaster pm (0: none to wait for).
// The postmaster removes postmaster.pid before it exits, and valgrind
// writes the count as the process exits: pg_ctl reports a stop done before
// the count is written, and a count that came later would be the next
// lifetime's (the ClearCounts before it has already run).
func (p *Postgres) waitCount(ctx context.Context, pm int) error {
	if pm == 0 {
		return nil
	}
	path := filepath.Join(p.base, countDir, "cg."+strconv.Itoa(pm))
	return poll.Until(ctx, 2*time.Minute, 20*time.Millisecond, func() (bool, error) {
		_, done, err := cachegrindTotal(path)
		if errors.Is(err, fs.ErrNotExist) {
			return false, nil
		}
		return done, err
	}, func() error {
		return fmt.Errorf("the counted postmaster %d wrote no instruction count two minutes after it stopped", pm)
	})
}

// ClearCounts removes the counts read so far.
func (p *Postgres) ClearCounts() error {
	files, _ := filepath.Glob(filepath.Join(p.base, countDir, "cg.*"))
	for _, f := range files {
		if err := os.Remove(f); err != nil {
			return err
		}
	}
	p.counted = nil
	return nil
}

// Children are the process ids whose parent is the postmaster: its
// helper processes and the backends of open sessions.
func (p *Postgres) Children() ([]int, error) {
	pm, err := p.PID()
	if err != nil {
		return nil, err
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", pm, pm))
	if err != nil {
		return nil, fmt.Errorf("children of the postmaster: %w", err)
	}
	var out []int
	for _, f := range strings.Fields(string(b)) {
		if pid, err := strconv.Atoi(f); err == nil {
			out = append(out, pid)
		}
	}
	return out, nil
}

// cachegrindTotal reads the total of a cachegrind output file (events:
// Ir only), its last line "summary: N". done is false while the file is
// still being written (no whole last line yet).
func cachegrindTotal(path string) (n uint64, done bool, err error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, false, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return 0, false, err
	}
	tail := make([]byte, min(st.Size(), 256))
	if _, err := f.ReadAt(tail, st.Size()-int64(len(tail))); err != nil {
		return 0, false, fmt.Errorf("%s: %w", path, err)
	}
	text, whole := strings.CutSuffix(string(tail), "\n")
	if !whole {
		return 0, false, nil
	}
	last := text[strings.LastIndexByte(text, '\n')+1:]
	rest, ok := strings.CutPrefix(last, "summary: ")
	if !ok {
		return 0, false, nil // the file's end is not written yet
	}
	n, err = strconv.ParseUint(strings.TrimSpace(rest), 10, 64)
	if err != nil {
		return 0, false, fmt.Errorf("%s: summary %q: %w", path, rest, err)
	}
	return n, true, nil
}

// shellQuote quotes s for sh.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
