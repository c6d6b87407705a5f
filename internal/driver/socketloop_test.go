package driver

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// exchange sends msg and reads the whole echoed answer.
func exchange(c *SocketConn, msg string) (string, error) {
	buf := make([]byte, 128)
	n, err := c.Exchange([]byte(msg), buf)
	if err != nil {
		return "", err
	}
	got := string(buf[:n])
	for len(got) < len(msg) {
		m, err := c.Read(buf)
		if err != nil {
			return got, err
		}
		got += string(buf[:m])
	}
	return got, nil
}

func newLoop(t *testing.T, conns ...*SocketConn) *SocketLoop {
	t.Helper()
	l, err := NewSocketLoop()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range conns {
		if err := l.Attach(c); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { l.Close() })
	return l
}

// A loop runs its sessions one at a time: while one runs between its
// waits, no other does, although the loop may move between OS threads
// (it passes through Go's scheduler every few milliseconds).
func TestLoopRunsItsSessionsOneAtATime(t *testing.T) {
	const sessions, rounds = 4, 200
	var conns []*SocketConn
	for range sessions {
		c, peer := pair(t)
		go echo(peer)
		conns = append(conns, c)
	}
	l := newLoop(t, conns...)
	errs := make([]error, sessions)
	var running, overlaps atomic.Int32
	var bodies []func()
	for i, c := range conns {
		bodies = append(bodies, func() {
			for k := range rounds {
				msg := fmt.Sprintf("session %d request %d", i, k)
				got, err := exchange(c, msg)
				if err != nil {
					errs[i] = err
					return
				}
				if want := string(msg[0]^0x20) + msg[1:]; got != want {
					errs[i] = fmt.Errorf("got %q, want %q", got, want)
					return
				}
				// Between waits, give the scheduler a chance and stay
				// busy for a while: a session that could run beside
				// this one, on another thread or on this one, would.
				if running.Add(1) != 1 {
					overlaps.Add(1)
				}
				runtime.Gosched()
				for end := time.Now().Add(20 * time.Microsecond); time.Now().Before(end); {
				}
				running.Add(-1)
			}
		})
	}
	if err := l.Run(context.Background(), bodies); err != nil {
		t.Fatal(err)
	}
	for i := range sessions {
		if errs[i] != nil {
			t.Errorf("session %d: %v", i, errs[i])
		}
	}
	if n := overlaps.Load(); n > 0 {
		t.Errorf("%d times a session ran while another did, want none", n)
	}
}

func TestLoopSleepDoesNotHoldUpOtherSessions(t *testing.T) {
	c, peer := pair(t)
	go echo(peer)
	l := newLoop(t, c)
	const nap = 200 * time.Millisecond
	var during int
	var slept time.Duration
	var sleepErr, exchErr error
	sleeping := true
	bodies := []func(){
		func() {
			start := time.Now()
			_, sleepErr = l.SleepUntil(start.Add(nap), nil)
			slept = time.Since(start)
			sleeping = false
		},
		func() {
			for sleeping {
				if _, exchErr = exchange(c, "ping"); exchErr != nil {
					return
				}
				during++
			}
		},
	}
	if err := l.Run(context.Background(), bodies); err != nil {
		t.Fatal(err)
	}
	if sleepErr != nil || exchErr != nil {
		t.Fatalf("sleep: %v; exchange: %v", sleepErr, exchErr)
	}
	if slept < nap {
		t.Errorf("slept %v, want at least %v", slept, nap)
	}
	if during < 10 {
		t.Errorf("the other session exchanged %d times during the sleep, want it to go on", during)
	}
}

// A sleep ends to well under a millisecond (the loop's timer), not at the
// next whole millisecond of epoll_wait's timeout: a session at a fixed
// rate starts when its arrival is due.
func TestLoopSleepEndsOnTime(t *testing.T) {
	l := newLoop(t)
	const naps = 200
	late := make([]time.Duration, 0, naps)
	var sleepErr error
	body := func() {
		for range naps {
			at := time.Now().Add(300 * time.Microsecond)
			if _, sleepErr = l.SleepUntil(at, nil); sleepErr != nil {
				return
			}
			late = append(late, time.Since(at))
		}
	}
	if err := l.Run(context.Background(), []func(){body}); err != nil || sleepErr != nil {
		t.Fatal(err, sleepErr)
	}
	slices.Sort(late)
	if late[0] < 0 {
		t.Errorf("a sleep ended %v early", -late[0])
	}
	// A wake-up on time is tens of microseconds late; whole milliseconds
	// would put the median near 700.
	if med := late[naps/2]; med > 400*time.Microsecond {
		t.Errorf("median sleep ended %v late; want well under a millisecond", med)
	}
}

func TestLoopStopEndsASleep(t *testing.T) {
	l := newLoop(t)
	stop := make(chan struct{})
	var stopped bool
	var err error
	var took time.Duration
	go func() {
		time.Sleep(50 * time.Millisecond)
		close(stop)
		l.Interrupt()
	}()
	start := time.Now()
	if rerr := l.Run(context.Background(), []func(){func() {
		stopped, err = l.SleepUntil(time.Now().Add(time.Hour), stop)
		took = time.Since(start)
	}}); rerr != nil {
		t.Fatal(rerr)
	}
	if !stopped || err != nil {
		t.Fatalf("SleepUntil = %v, %v; want stopped", stopped, err)
	}
	if took > 10*time.Second {
		t.Errorf("the sleep ended %v after it began, long after its stop", took)
	}
}

func TestLoopDeadlineFromAnotherGoroutineInterruptsAWait(t *testing.T) {
	c, _ := pair(t) // the peer never answers
	l := newLoop(t, c)
	go func() {
		time.Sleep(50 * time.Millisecond)
		c.SetDeadline(time.Unix(1, 0))
	}()
	var err error
	if rerr := l.Run(context.Background(), []func(){func() {
		_, err = exchange(c, "no answer")
	}}); rerr != nil {
		t.Fatal(rerr)
	}
	if !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("exchange: %v, want %v", err, os.ErrDeadlineExceeded)
	}
}

func TestLoopDeadlineSetBeforeAWait(t *testing.T) {
	c, _ := pair(t)
	l := newLoop(t, c)
	var err error
	var took time.Duration
	l.Run(context.Background(), []func(){func() {
		start := time.Now()
		c.SetReadDeadline(start.Add(100 * time.Millisecond))
		_, err = exchange(c, "no answer")
		took = time.Since(start)
	}})
	if !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("exchange: %v, want %v", err, os.ErrDeadlineExceeded)
	}
	if took < 100*time.Millisecond {
		t.Errorf("the wait ended after %v, before its deadline", took)
	}
}

func TestLoopCancelEndsWaits(t *testing.T) {
	c, _ := pair(t)
	l := newLoop(t, c)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		time.Sleep(50 * time.Millisecond)
		cancel()
	}()
	var readErr, sleepErr error
	l.Run(ctx, []func(){
		func() { _, readErr = exchange(c, "no answer") },
		func() { _, sleepErr = l.SleepUntil(time.Now().Add(time.Hour), nil) },
	})
	if !errors.Is(readErr, context.Canceled) || !errors.Is(sleepErr, context.Canceled) {
		t.Fatalf("exchange: %v; sleep: %v; want %v for both", readErr, sleepErr, context.Canceled)
	}
}

func TestLoopWritesMoreThanTheSocketBuffer(t *testing.T) {
	c, peer := pair(t)
	msg := bytes.Repeat([]byte("request!"), 1<<16) // 512 KiB
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		b := make([]byte, len(msg))
		if _, err := io.ReadFull(peer, b); err != nil {
			return
		}
		peer.Write([]byte("done"))
	}()
	l := newLoop(t, c)
	var got string
	var err error
	l.Run(context.Background(), []func(){func() {
		buf := make([]byte, 16)
		var n int
		n, err = c.Exchange(msg, buf)
		got = string(buf[:n])
	}})
	wg.Wait()
	if err != nil || got == "" || got != "done"[:len(got)] {
		t.Fatalf("exchange: %q, %v; want a prefix of %q", got, err, "done")
	}
}

func TestLoopCloseGivesTheSocketBack(t *testing.T) {
	c, peer := pair(t)
	go echo(peer)
	l, err := NewSocketLoop()
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Attach(c); err != nil {
		t.Fatal(err)
	}
	l.Run(context.Background(), []func(){func() { exchange(c, "in the loop") }})
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	got, err := exchange(c, "after the loop")
	if err != nil || got != "After the loop" {
		t.Fatalf("exchange after Close: %q, %v", got, err)
	}
	// Its own deadlines work again.
	c.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
	if _, err := c.Read(make([]byte, 8)); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read after Close with a deadline: %v", err)
	}
}

func TestLoopRefusesAWaitOutsideItsSessions(t *testing.T) {
	c, _ := pair(t) // the peer never answers: the exchange must wait
	newLoop(t, c)
	_, err := exchange(c, "outside")
	if err == nil || !strings.Contains(err.Error(), "outside the loop's sessions") {
		t.Fatalf("exchange outside the loop: %v, want it refused", err)
	}
}
