package mariadb

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"

	"github.com/obsbench/obsbench/internal/server"
)

// countedMariaDBOptions are what mariadbd needs to run under valgrind,
// and what makes a session's count repeat. Valgrind has no io_uring or
// libaio, and a buffer pool that may grow to the machine's memory
// reserves more address space than valgrind gives: those change the
// server's background I/O, not what a statement executes. The others
// take timing out of a session's path: a buffer pool loaded at start-up
// by a background thread races the session for the pages it reads (which
// of them reads a page from disk depends on who gets there first); a page
// made young only once it has been in the buffer pool a second depends
// on how fast the session runs; a cached thread brings the state of the
// session it served before; and the table cache's instances grow under
// contention. Each lifetime starts with the same cold buffer pool and the
// same fresh threads instead.
var countedMariaDBOptions = []string{
	"--innodb-use-native-aio=0", "--innodb-buffer-pool-size-max=1G",
	"--innodb-buffer-pool-load-at-startup=0", "--innodb-buffer-pool-dump-at-shutdown=0",
	"--innodb-old-blocks-time=0", "--thread-cache-size=0", "--table-open-cache-instances=1",
}

// commandEntry is the function in which mariadbd reads and serves one
// client command (a query, a prepared statement's execution), on the
// thread of the command's connection: its inclusive count is the
// sessions' work, less commandRead, reading the command from the socket,
// whose count depends on whether its bytes had arrived (a read that
// finds none waits and reads again), which is timing, not work.
const (
	commandEntry = "do_command("
	commandRead  = "my_net_read_packet"
)

// connectionEnd is the function after which callgrind writes what it
// counted so far (--dump-after) and starts again from zero: once per
// client connection, in the connection's thread, after its last command.
// A lifetime's sessions, run one after another, are told apart by these
// dumps, so that one lifetime counts a control session and a measured
// one: two lifetimes would each bring their own start-up state.
const connectionEnd = "end_connection"

// Tally is a counted server lifetime: the user-space instructions its
// threads executed serving client commands, split at each end of a client
// connection, and all the others (Rest: start-up, shutdown, connection
// set-up, background threads). Connections[i] is what was served after
// the i-th ended connection's predecessor and up to its end (the last
// entry, after the last end, up to the shutdown).
type Tally struct {
	Connections []uint64
	Rest        uint64
}

// Commands is what the lifetime's threads executed serving client
// commands: the connections' parts together.
func (t Tally) Commands() uint64 {
	var n uint64
	for _, c := range t.Connections {
		n += c
	}
	return n
}

// CountInstructions makes the server's next start or restart run under
// valgrind's callgrind tool, which, unlike cachegrind, can tell the
// instructions spent inside a function: mariadbd is one process whose
// sessions are threads, so the sessions' work is what runs inside
// do_command. on=false makes the next start run the server as it is.
func (m *Instance) CountInstructions(on bool) error {
	if !on {
		m.counter = nil
		return nil
	}
	valgrind, err := exec.LookPath("valgrind")
	if err != nil {
		return server.ErrNoValgrind
	}
	dir := filepath.Join(m.Base, server.CountDir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	if m.Cred != nil {
		if err := os.Chown(dir, int(m.Cred.Uid), int(m.Cred.Gid)); err != nil {
			return err
		}
	}
	// --vgdb=no: no gdb server and so no FIFOs in /tmp for another
	// account to open.
	m.counter = []string{valgrind, "-q", "--tool=callgrind", "--vgdb=no", "--callgrind-out-file=" + filepath.Join(dir, "cg.%p"),
		"--dump-after=" + connectionEnd + "*"}
	return nil
}

// ShiftStack makes the counted lifetimes started from now on begin their
// main thread's stack bytes lower than the others (stackShiftVar); the
// sessions' threads have stacks of their own, which it does not move.
func (m *Instance) ShiftStack(bytes int) { m.shift = bytes }

// LastTally is the count of the server lifetime that the latest stop
// ended (a Restart's, or Stop's), read once: a second call, or one after
// a lifetime that did not run under the counter, is an error.
func (m *Instance) LastTally() (Tally, error) {
	if m.endedPID == 0 {
		return Tally{}, fmt.Errorf("no counted mariadbd lifetime has ended")
	}
	path := filepath.Join(m.Base, server.CountDir, "cg."+strconv.Itoa(m.endedPID))
	m.endedPID = 0
	dumps, err := server.NumberedDumps(path)
	if err != nil {
		return Tally{}, err
	}
	var total uint64
	var tally Tally
	for _, p := range append(dumps, path) {
		t, in, err := readDump(p, m.keep)
		if err != nil {
			return Tally{}, err
		}
		total += t
		tally.Connections = append(tally.Connections, in)
	}
	inside := tally.Commands()
	if inside == 0 {
		return Tally{}, fmt.Errorf("%s: no instructions inside %s...): no client command ran, or mariadbd has no symbols to tell its sessions' work by", path, commandEntry)
	}
	tally.Rest = total - inside
	return tally, nil
}

// EndedConnections is how many client connections of the running counted
// lifetime have ended, each counted apart (Tally.Connections).
func (m *Instance) EndedConnections() (int, error) {
	pid, err := m.PID()
	if err != nil {
		return 0, err
	}
	dumps, err := server.NumberedDumps(filepath.Join(m.Base, server.CountDir, "cg."+strconv.Itoa(pid)))
	return len(dumps), err
}

// KeepCountsEnv names a directory where the counted MariaDB's callgrind
// files are copied before they are read and removed: to compare two
// lifetimes function by function (callgrind_annotate), which the
// instructions per statement alone cannot tell apart.
const KeepCountsEnv = "OBSBENCH_KEEP_COUNTS"

// readDump reads one callgrind file (and removes it): its total and what
// ran inside commandEntry, less commandRead; a copy is kept in keep
// unless it is empty.
func readDump(path, keep string) (total, inside uint64, err error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, 0, fmt.Errorf("instruction count of mariadbd: %w", err)
	}
	defer os.Remove(path)
	defer f.Close()
	if keep != "" {
		if err := copyFile(path, filepath.Join(keep, filepath.Base(path))); err != nil {
			return 0, 0, fmt.Errorf("%s: %w", KeepCountsEnv, err)
		}
	}
	total, inside, err = server.CallgrindInclusive(f, commandEntry, commandRead)
	if err != nil {
		return 0, 0, fmt.Errorf("%s: %w", path, err)
	}
	return total, inside, nil
}

// copyFile copies src to a new file dst, readable by its owner alone.
func copyFile(src, dst string) error {
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	return os.WriteFile(dst, b, 0o600)
}
