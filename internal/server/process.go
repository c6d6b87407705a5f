package server

import (
	"context"
	"fmt"
	"net"
	"os"
	"strings"
	"time"

	"github.com/obsbench/obsbench/internal/poll"
)

// IsExecutable says whether path is a regular file someone may execute:
// how a server's binaries are found.
func IsExecutable(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0
}

// DialUnix connects to the unix socket at path, giving up after a second:
// how a starting server is asked whether it listens yet.
func DialUnix(path string) (net.Conn, error) { return net.DialTimeout("unix", path, time.Second) }

// FreePort is a TCP port on loopback that nothing listens on now.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// StackShiftVar is an environment variable that takes the given bytes more
// than one of no length would: the kernel puts the environment's strings
// at the top of a new program's stack, so its stack begins that much
// lower, and everything on it lies elsewhere relative to pages and cache
// lines.
func StackShiftVar(bytes int) string {
	return "OBSBENCH_STACK_SHIFT=" + strings.Repeat("x", bytes)
}

// PollOne runs query with run every 50 ms until its answer is "1", for at
// most a minute: how a managed server waits for its standby or replica.
// On timeout the error holds the last answer.
func PollOne(ctx context.Context, run func(context.Context, string) (string, error), query string) error {
	var out string
	var err error
	return poll.Until(ctx, time.Minute, 50*time.Millisecond, func() (bool, error) {
		out, err = run(ctx, query)
		return err == nil && out == "1", nil
	}, func() error {
		return fmt.Errorf("not so after 60s (last answer %q, %v)", out, err)
	})
}
