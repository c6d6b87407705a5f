package postgres

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/obsbench/obsbench/internal/poll"
	"github.com/obsbench/obsbench/internal/server"
)

// ProcessCount is the user-space instructions one server process
// executed, from its start (or fork) to its exit.
type ProcessCount struct {
	PID          int
	Instructions uint64
}

// CountInstructions makes the server's next start or restart run under
// valgrind's instruction counter (cachegrind without its cache
// simulation; callgrind after SplitStatements(true)): every process, the
// postmaster and each process it forks, writes the user-space
// instructions it executed when it exits (Counts). on=false makes the
// next start run the server as it is. It changes nothing until a
// restart.
func (p *Instance) CountInstructions(on bool) error {
	if !on {
		p.counter = ""
		return nil
	}
	valgrind, err := exec.LookPath("valgrind")
	if err != nil {
		return server.ErrNoValgrind
	}
	dir := filepath.Join(p.Base, server.CountDir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	uid, gid := os.Geteuid(), os.Getegid()
	if p.Cred != nil {
		uid, gid = int(p.Cred.Uid), int(p.Cred.Gid)
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
	tool := "--tool=cachegrind --cache-sim=no --branch-sim=no --cachegrind-out-file=" + shellQuote(dir+"/cg.%p")
	if p.splitStatements {
		tool = "--tool=callgrind --dump-before=" + statementStart + " --callgrind-out-file=" + shellQuote(dir+"/cg.%p")
	}
	wrapper := filepath.Join(p.Base, "postgres-counted")
	script := fmt.Sprintf("#!/bin/sh\nTMPDIR=%[2]s exec %[1]s -q %[4]s --vgdb=no %[3]s \"$@\" -c max_parallel_workers_per_gather=0 -c autovacuum=off\n",
		shellQuote(valgrind), shellQuote(dir), shellQuote(filepath.Join(p.binDir, "postgres")), tool)
	if err := server.WritePrivate(wrapper, script, uid, gid); err != nil {
		return err
	}
	if err := os.Chmod(wrapper, 0o700); err != nil {
		return err
	}
	p.counter = wrapper
	return nil
}

// statementStart is the function before which a process that counts its
// statements apart writes what it has counted so far: a statement's
// portal, which PostgreSQL creates once per statement of either
// protocol, at the start of an extended-protocol statement's Bind (before
// it plans), and after a simple-protocol statement is planned. It is
// exported from the postgres binary, which Debian ships without its
// static functions' names.
const statementStart = "CreatePortal"

// SplitStatements makes the counter that CountInstructions(true) sets up
// from now on count each process's statements apart: callgrind, which
// writes what a process counted so far each time it starts a statement
// (StatementCounts). It is slower than the plain count, so off unless
// asked for.
func (p *Instance) SplitStatements(on bool) { p.splitStatements = on }

// StatementCounts are the counts of process pid, read by Counts, split at
// the start of each statement it ran: the first from the process's
// start (with what it inherited from the postmaster) to its first
// statement, each next one from a statement's start to the next's, the
// last from the last statement's start to its exit. A process that ran
// no statement, or was not counted so, has one part, its whole count.
func (p *Instance) StatementCounts(pid int) []uint64 { return slices.Clone(p.parts[pid]) }

// ShiftStack makes the counted lifetimes started from now on begin their
// stacks bytes lower than the others: pg_ctl, and so the postmaster, gets
// an environment that much longer (stackShiftVar). The backends, forked
// from the postmaster, inherit its stack.
func (p *Instance) ShiftStack(bytes int) { p.shift = bytes }

// Counts are the counts of the processes that exited since the last
// ClearCounts, by process id. A process that is still running, or still
// writing its count as it exits, has none yet.
func (p *Instance) Counts() (map[int]uint64, error) {
	files, err := filepath.Glob(filepath.Join(p.Base, server.CountDir, "cg.*"))
	if err != nil {
		return nil, err
	}
	if p.parts == nil {
		p.parts = map[int][]uint64{}
	}
	for _, f := range files {
		// cg.PID is a process's count (its last part when it counts its
		// statements apart: cg.PID.1, cg.PID.2, ... are the others).
		pid, err := strconv.Atoi(strings.TrimPrefix(filepath.Base(f), "cg."))
		if err != nil {
			continue
		}
		if _, ok := p.parts[pid]; ok {
			continue
		}
		n, done, err := countTotal(f)
		if err != nil {
			return nil, err
		}
		if !done {
			continue
		}
		dumps, err := server.NumberedDumps(f)
		if err != nil {
			return nil, err
		}
		var parts []uint64
		for _, d := range dumps {
			k, done, err := countTotal(d)
			if err == nil && !done {
				err = fmt.Errorf("%s: no total: written before the process's last part, yet unfinished", d)
			}
			if err != nil {
				return nil, err
			}
			parts = append(parts, k)
		}
		p.parts[pid] = append(parts, n)
	}
	counts := make(map[int]uint64, len(p.parts))
	for pid, parts := range p.parts {
		for _, k := range parts {
			counts[pid] += k
		}
	}
	return counts, nil
}

// countedPostmaster is the process id of the running postmaster if it runs
// under the counter, else 0.
func (p *Instance) countedPostmaster() int {
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
func (p *Instance) waitCount(ctx context.Context, pm int) error {
	if pm == 0 {
		return nil
	}
	path := filepath.Join(p.Base, server.CountDir, "cg."+strconv.Itoa(pm))
	return poll.Until(ctx, 2*time.Minute, 20*time.Millisecond, func() (bool, error) {
		_, done, err := countTotal(path)
		if errors.Is(err, fs.ErrNotExist) {
			return false, nil
		}
		return done, err
	}, func() error {
		return fmt.Errorf("the counted postmaster %d wrote no instruction count two minutes after it stopped", pm)
	})
}

// ClearCounts removes the counts read so far.
func (p *Instance) ClearCounts() error {
	files, _ := filepath.Glob(filepath.Join(p.Base, server.CountDir, "cg.*"))
	for _, f := range files {
		if err := os.Remove(f); err != nil {
			return err
		}
	}
	p.parts = nil
	return nil
}

// Children are the process ids whose parent is the postmaster: its
// helper processes and the backends of open sessions.
func (p *Instance) Children() ([]int, error) {
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

// countTotal reads the total of a cachegrind output file (events: Ir
// only), its last line "summary: N", or of a callgrind one, "totals: N".
// done is false while the file is still being written (no whole last
// line yet).
func countTotal(path string) (n uint64, done bool, err error) {
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
		rest, ok = strings.CutPrefix(last, "totals: ")
	}
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
