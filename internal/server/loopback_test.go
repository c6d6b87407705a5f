package server

import (
	"net"
	"testing"
)

// ListenLoopback listens on a free loopback TCP port until the test ends.
func ListenLoopback(t testing.TB) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	return ln
}

// ServeLoopback is ListenLoopback, every connection accepted handed to
// serve, in turn.
func ServeLoopback(t testing.TB, serve func(net.Conn)) net.Listener {
	t.Helper()
	ln := ListenLoopback(t)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			serve(c)
		}
	}()
	return ln
}
