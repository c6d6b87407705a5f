package server_test

import (
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/obsbench/obsbench/internal/engine/servertest"
	"github.com/obsbench/obsbench/internal/server"
)

// The relay serves the one OS user it was started for (here, the test's
// own) and closes another account's connection before dialling the
// target: the outsider reads none of the target's greeting.
func TestRelayServesOnlyItsUser(t *testing.T) {
	servertest.SkipShort(t)
	target := server.ServeLoopback(t, func(c net.Conn) {
		c.Write([]byte("greeting\n"))
		c.Close()
	})
	r, err := server.StartRelay(target.Addr().String(), time.Millisecond, os.Geteuid())
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	addr := "127.0.0.1:" + strconv.Itoa(r.Port())

	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	c.SetDeadline(time.Now().Add(10 * time.Second))
	b, err := io.ReadAll(c)
	c.Close()
	if string(b) != "greeting\n" {
		t.Fatalf("through the relay as its user: %q, %v; want the greeting", b, err)
	}

	// bash's /dev/tcp: a plain TCP client that prints what it reads.
	a := servertest.AsOutsider(t, "reading through the relay", "bash", "-c", "exec 3<>/dev/tcp/127.0.0.1/"+strconv.Itoa(r.Port())+" && cat <&3")
	if a.Output != "" {
		t.Errorf("as %s, the relay passed on %q; want the connection closed unserved", servertest.OutsiderAccount, a.Output)
	}
	if got := r.Refused(); got != 1 {
		t.Errorf("relay refused %d connections; want 1 (the outsider's)", got)
	}
	if err := r.Unserved(); err == nil || !strings.Contains(err.Error(), "made by OS user") {
		t.Errorf("relay's reason for the refusal: %v; want the connection's OS user named", err)
	}
}
