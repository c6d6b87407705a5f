package driver

import (
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"sync"
	"testing"
	"time"
)

// pair returns a SocketConn over one end of a Unix socket pair and the other
// end as a plain net.Conn, the test's stand-in for the server.
func pair(t *testing.T) (*SocketConn, net.Conn) {
	t.Helper()
	dir := t.TempDir()
	ln, err := net.Listen("unix", dir+"/s")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			close(accepted)
			return
		}
		accepted <- c
	}()
	nc, err := net.Dial("unix", dir+"/s")
	if err != nil {
		t.Fatal(err)
	}
	peer, ok := <-accepted
	if !ok {
		t.Fatal("accept failed")
	}
	c, err := TakeSocket(nc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(); peer.Close() })
	return c, peer
}

// echo answers every read on peer with the same bytes upper-cased in the
// first byte, so a test can tell the answer from its own request.
func echo(peer net.Conn) {
	buf := make([]byte, 64<<10)
	for {
		n, err := peer.Read(buf)
		if err != nil {
			return
		}
		buf[0] ^= 0x20
		if _, err := peer.Write(buf[:n]); err != nil {
			return
		}
	}
}

func TestExchangeRoundTrips(t *testing.T) {
	c, peer := pair(t)
	go echo(peer)
	buf := make([]byte, 128)
	for i, msg := range []string{"a", "query one", "b2", "a longer request than the others"} {
		n, err := c.Exchange([]byte(msg), buf)
		if err != nil {
			t.Fatalf("exchange %d: %v", i, err)
		}
		got := string(buf[:n])
		// A short answer may arrive in pieces; read the rest.
		for len(got) < len(msg) {
			m, err := c.Read(buf)
			if err != nil {
				t.Fatalf("exchange %d: read rest: %v", i, err)
			}
			got += string(buf[:m])
		}
		want := string(msg[0]^0x20) + msg[1:]
		if got != want {
			t.Errorf("exchange %d: got %q, want %q", i, got, want)
		}
	}
}

func TestReadAndWrite(t *testing.T) {
	tests := []struct {
		name string
		msg  []byte
	}{
		{"one byte", []byte("x")},
		{"a statement", []byte("SELECT 1")},
		// Larger than a Unix socket's buffer (about 200 KiB here): the
		// write must wait for output space while the peer reads.
		{"larger than the socket buffer", bytes.Repeat([]byte("0123456789abcdef"), 1<<16)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, peer := pair(t)
			got := make(chan []byte, 1)
			go func() {
				var b bytes.Buffer
				small := make([]byte, 4096) // a slow reader: small reads
				for b.Len() < len(tt.msg) {
					n, err := peer.Read(small)
					if err != nil {
						break
					}
					b.Write(small[:n])
				}
				got <- b.Bytes()
			}()
			n, err := c.Write(tt.msg)
			if err != nil || n != len(tt.msg) {
				t.Fatalf("Write = %d, %v; want %d, nil", n, err, len(tt.msg))
			}
			if !bytes.Equal(<-got, tt.msg) {
				t.Fatal("the peer read something other than what was written")
			}
			if c.out {
				t.Error("the socket is still registered for output after the write")
			}
			// And back: the peer's bytes arrive through Read.
			go peer.Write(tt.msg)
			var b bytes.Buffer
			buf := make([]byte, 32<<10)
			for b.Len() < len(tt.msg) {
				n, err := c.Read(buf)
				if err != nil {
					t.Fatalf("Read after %d bytes: %v", b.Len(), err)
				}
				b.Write(buf[:n])
			}
			if !bytes.Equal(b.Bytes(), tt.msg) {
				t.Fatal("Read returned something other than what the peer wrote")
			}
		})
	}
}

func TestExchangeLargerThanTheSocketBuffer(t *testing.T) {
	c, peer := pair(t)
	msg := bytes.Repeat([]byte("request!"), 1<<16) // 512 KiB
	go func() {
		b := make([]byte, len(msg))
		if _, err := io.ReadFull(peer, b); err != nil {
			return
		}
		peer.Write([]byte("done"))
	}()
	buf := make([]byte, 16)
	n, err := c.Exchange(msg, buf)
	if err != nil {
		t.Fatal(err)
	}
	if string(buf[:n]) != "done"[:n] || n == 0 {
		t.Fatalf("answer %q, want a prefix of %q", buf[:n], "done")
	}
}

func TestDeadlines(t *testing.T) {
	tests := []struct {
		name string
		set  func(*SocketConn, time.Time) error
		call func(*SocketConn) error
	}{
		{"read deadline bounds Read", (*SocketConn).SetReadDeadline, func(c *SocketConn) error {
			_, err := c.Read(make([]byte, 8))
			return err
		}},
		{"deadline bounds Exchange", (*SocketConn).SetDeadline, func(c *SocketConn) error {
			_, err := c.Exchange([]byte("no answer comes"), make([]byte, 8))
			return err
		}},
		{"write deadline bounds a blocked Write", (*SocketConn).SetWriteDeadline, func(c *SocketConn) error {
			// The peer never reads: the buffer fills and the write waits.
			_, err := c.Write(make([]byte, 8<<20))
			return err
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, _ := pair(t)
			if err := tt.set(c, time.Now().Add(50*time.Millisecond)); err != nil {
				t.Fatal(err)
			}
			err := tt.call(c)
			if !errors.Is(err, os.ErrDeadlineExceeded) {
				t.Fatalf("got %v, want os.ErrDeadlineExceeded", err)
			}
			// A cleared deadline lets the connection be used again.
			if err := tt.set(c, time.Time{}); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// waitingRead starts a Read on c that waits, since nothing comes, and
// returns where its error will arrive.
func waitingRead(c *SocketConn) <-chan error {
	done := make(chan error, 1)
	go func() {
		_, err := c.Read(make([]byte, 8))
		done <- err
	}()
	time.Sleep(20 * time.Millisecond)
	return done
}

func TestDeadlineInThePastInterruptsAWaitingRead(t *testing.T) {
	c, _ := pair(t)
	done := waitingRead(c)
	if err := c.SetReadDeadline(time.Unix(1, 0)); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("got %v, want os.ErrDeadlineExceeded", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a deadline in the past did not interrupt the read")
	}
}

func TestPeerCloseGivesEOF(t *testing.T) {
	c, peer := pair(t)
	peer.Write([]byte("last"))
	peer.Close()
	buf := make([]byte, 8)
	n, err := c.Read(buf)
	if err != nil || string(buf[:n]) != "last" {
		t.Fatalf("first Read = %q, %v; want the pending bytes", buf[:n], err)
	}
	if _, err := c.Read(buf); err != io.EOF {
		t.Fatalf("Read after the peer closed = %v, want io.EOF", err)
	}
}

func TestCloseGivesThePeerEOF(t *testing.T) {
	c, peer := pair(t)
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	peer.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := peer.Read(make([]byte, 8)); err != io.EOF {
		t.Fatalf("the peer's Read after Close = %v, want io.EOF (the duplicate must be the only descriptor left)", err)
	}
}

func TestTakeRefusesAConnWithoutADescriptor(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	if _, err := TakeSocket(a); !errors.Is(err, ErrNotSocket) {
		t.Fatalf("TakeSocket(net.Pipe) = %v, want ErrNotSocket", err)
	}
}

// Concurrent sessions each wait on their own epoll instance; one
// session's answers never wake or reach another.
func TestSessionsDoNotShareWakeUps(t *testing.T) {
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		c, peer := pair(t)
		go echo(peer)
		wg.Add(1)
		go func(id byte) {
			defer wg.Done()
			buf := make([]byte, 8)
			for j := 0; j < 500; j++ {
				n, err := c.Exchange([]byte{'a' + id}, buf)
				if err != nil || n != 1 || buf[0] != ('a'+id)^0x20 {
					t.Errorf("session %d, exchange %d: %q, %v", id, j, buf[:n], err)
					return
				}
			}
		}(byte(i))
	}
	wg.Wait()
}

// Close from another goroutine (a cancelled session) ends a waiting read
// with an error instead of leaving it blocked.
func TestCloseEndsAWaitingRead(t *testing.T) {
	c, _ := pair(t)
	done := waitingRead(c)
	c.Close()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("a read on a closed SocketConn returned no error")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not end the waiting read")
	}
}

// A second Close must not close the descriptor number again: by then it
// may belong to another file.
func TestSecondCloseLeavesOtherFilesAlone(t *testing.T) {
	c, _ := pair(t)
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	// Two files take the two numbers the first Close freed (the lowest
	// free numbers are given out first).
	var files []*os.File
	for i := 0; i < 2; i++ {
		f, err := os.Open(os.DevNull)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		files = append(files, f)
	}
	if err := c.Close(); !errors.Is(err, os.ErrClosed) {
		t.Fatalf("second Close = %v, want os.ErrClosed", err)
	}
	for _, f := range files {
		if _, err := f.Stat(); err != nil {
			t.Fatalf("a file opened after the first Close was closed by the second: %v", err)
		}
	}
}

// Exchange waits after writing without reading first: an answer that
// comes later, in one piece or in two, is read whole.
func TestExchangeWaitsForALateAnswer(t *testing.T) {
	tests := []struct {
		name   string
		pieces []string
	}{
		{"one piece", []string{"answer"}},
		{"two pieces", []string{"ans", "wer"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, peer := pair(t)
			go func() {
				req := make([]byte, 16)
				if _, err := peer.Read(req); err != nil {
					return
				}
				for _, p := range tt.pieces {
					time.Sleep(30 * time.Millisecond)
					peer.Write([]byte(p))
				}
			}()
			buf := make([]byte, 16)
			n, err := c.Exchange([]byte("request"), buf)
			if err != nil {
				t.Fatal(err)
			}
			got := string(buf[:n])
			for len(got) < len("answer") {
				m, err := c.Read(buf)
				if err != nil {
					t.Fatalf("after %q: %v", got, err)
				}
				got += string(buf[:m])
			}
			if got != "answer" {
				t.Fatalf("got %q, want %q", got, "answer")
			}
		})
	}
}
