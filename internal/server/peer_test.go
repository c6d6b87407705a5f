package server

import (
	"errors"
	"net"
	"net/netip"
	"os"
	"sync"
	"sync/atomic"
	"testing"

	"golang.org/x/sys/unix"
)

// The relay's check of who connected must not miss a connection while
// other sockets open and close: a miss closes the standby's own
// connection, and its base backup fails. Here 300 connections are
// accepted while other goroutines open and close loopback connections as
// fast as they can; every one must be found, and as ours.
func TestPeerUIDFindsEveryConnectionAmidChurn(t *testing.T) {
	ln := ListenLoopback(t)
	churn := ServeLoopback(t, func(c net.Conn) { c.Close() })
	// Many sockets make /proc/net/tcp long enough to be read in
	// several reads.
	var held []net.Conn
	defer func() {
		for _, c := range held {
			c.Close()
		}
	}()
	for range 500 {
		c, err := net.Dial("tcp", churn.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, c)
	}
	var stop atomic.Bool
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			for !stop.Load() {
				if c, err := net.Dial("tcp", churn.Addr().String()); err == nil {
					c.Close()
				}
			}
		})
	}
	defer func() { stop.Store(true); wg.Wait() }()

	me := os.Geteuid()
	for i := range 300 {
		out, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		in, err := ln.Accept()
		if err != nil {
			t.Fatal(err)
		}
		uid, err := peerUID(in)
		if err != nil || uid != me {
			t.Errorf("connection %d: peerUID = %d, %v; want %d", i, uid, err, me)
		}
		in.Close()
		out.Close()
	}
}

// A socket that does not exist is not found: the kernel answers ENOENT,
// and no uid comes back.
func TestDiagPeerOfNoSocket(t *testing.T) {
	ln := ListenLoopback(t)
	ours := ln.Addr().(*net.TCPAddr).AddrPort()
	ln.Close()
	uid, err := diagPeer(ours, netip.MustParseAddrPort("127.0.0.1:1"))
	if !errors.Is(err, unix.ENOENT) {
		t.Fatalf("diagPeer of no socket = %d, %v; want ENOENT", uid, err)
	}
}

// An IPv6 loopback connection is found as an IPv4 one is.
func TestDiagPeerIPv6(t *testing.T) {
	ln, err := net.Listen("tcp", "[::1]:0")
	if err != nil {
		t.Skipf("no IPv6 loopback here: %v", err)
	}
	defer ln.Close()
	out, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	in, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	local, remote, err := loopbackEnds(in)
	if err != nil {
		t.Fatal(err)
	}
	if uid, err := diagPeer(local, remote); err != nil || uid != os.Geteuid() {
		t.Fatalf("diagPeer = %d, %v; want %d", uid, err, os.Geteuid())
	}
}
