// Package server is the plumbing every managed database server shares,
// whatever its engine: a private temporary directory reaped once its
// owner is gone, slow directories for sinks, the log stream, companions'
// relays, loopback peers, secrets, and valgrind's counts. Each engine's
// managed server is in its own package (internal/engine/NAME); nothing
// here names an engine.
package server

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// maxSocketPath is the longest path a unix socket may have on Linux
// (sockaddr_un's sun_path: 108 bytes with the closing NUL), and
// longestSocket the longest name a server gives its socket.
const (
	maxSocketPath = 107
	longestSocket = ".s.PGSQL.65535"
)

// DirSpec says what a managed server's directory is for.
type DirSpec struct {
	// Prefix starts the directory's name (obsbench-NAME-): a killed
	// obsbench's directories are found by it.
	Prefix string
	// OSUser is the account the server runs as when obsbench runs as
	// root; Install says what creates it.
	OSUser, Install string
	// PIDFile, relative to the directory, is where the server writes its
	// process id once it runs, and Signal stops it at once: what
	// ReapStale sends a server whose obsbench is gone.
	PIDFile string
	Signal  syscall.Signal
}

// reapFile is where NewDir writes the spec's PIDFile and Signal for
// ReapStale, and ownerFile the process that owns the directory.
const (
	reapFile  = "reap"
	ownerFile = "owner.pid"
)

// NewDir reaps servers a killed obsbench left, then creates a managed
// server's temporary directory (named spec.Prefix...), owned by the OS
// user the server runs as: the current one, or spec.OSUser when that is
// root. ownerFile in it names this process, so that the directory is
// reaped once it is gone.
func NewDir(spec DirSpec, logf func(string, ...any)) (d Dir, uid, gid int, err error) {
	cred, uid, gid, err := credentialOf(spec.OSUser, spec.Install)
	if err != nil {
		return d, 0, 0, err
	}
	ReapStale(logf)
	base, err := mkdirFixedLength(spec.Prefix)
	if err != nil {
		return d, 0, 0, fmt.Errorf("create server directory: %w", err)
	}
	if sock := filepath.Join(base, longestSocket); len(sock) > maxSocketPath {
		os.RemoveAll(base)
		return d, 0, 0, fmt.Errorf("the server's unix socket would be %s, %d bytes, over the %d a socket's path may have: set TMPDIR to a shorter directory", sock, len(sock), maxSocketPath)
	}
	err = os.WriteFile(filepath.Join(base, reapFile), []byte(fmt.Sprintf("%s\n%d\n", spec.PIDFile, int(spec.Signal))), 0o644)
	if err == nil {
		err = os.WriteFile(filepath.Join(base, ownerFile), []byte(strconv.Itoa(os.Getpid())), 0o644)
	}
	if err == nil && cred != nil {
		if err = os.Chown(base, uid, gid); err != nil {
			err = fmt.Errorf("hand server directory to the %s user: %w", spec.OSUser, err)
		}
	}
	if err != nil {
		os.RemoveAll(base)
		return d, 0, 0, err
	}
	return Dir{Base: base, Cred: cred, Log: logf}, uid, gid, nil
}

// mkdirFixedLength creates a new directory in os.TempDir() named prefix
// and ten random digits, where os.MkdirTemp's random part is one to ten:
// every server's paths then have the same length. What a server counts
// under valgrind depends on where its strings lie in memory (a vectorised
// comparison's instructions do), and the length of its command line and
// environment, its data directory's path among them, moves its stack.
func mkdirFixedLength(prefix string) (string, error) {
	for range 1000 {
		dir := filepath.Join(os.TempDir(), fmt.Sprintf("%s%010d", prefix, rand.Uint32()))
		if err := os.Mkdir(dir, 0o700); !errors.Is(err, fs.ErrExist) {
			return dir, err
		}
	}
	return "", fmt.Errorf("no new directory %s%%010d in %s after 1000 tries", prefix, os.TempDir())
}

// credentialOf says which OS user a server runs as: the current one, or
// name when the current one is root (install says what creates it).
func credentialOf(name, install string) (*syscall.Credential, int, int, error) {
	if os.Geteuid() != 0 {
		return nil, os.Geteuid(), os.Getegid(), nil
	}
	u, err := user.Lookup(name)
	if err != nil {
		return nil, 0, 0, fmt.Errorf("running as root needs the unprivileged user `%s` to run the server (created by %s): %w", name, install, err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, uid, gid, nil
}

// FileTail is the last n lines of a server's log, "" when it cannot be
// read: what start-up and shutdown errors quote.
func FileTail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// Lookup is getenv(name), or "" where getenv is nil: a server is started
// with the variables its caller read, none by default.
func Lookup(getenv func(string) string, name string) string {
	if getenv == nil {
		return ""
	}
	return getenv(name)
}
