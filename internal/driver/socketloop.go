package driver

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"os"
	"runtime"
	"time"

	"golang.org/x/sys/unix"
)

// SocketLoop runs several sessions one at a time on one goroutine, as each of
// pgbench's -j threads runs its clients: one epoll_wait(2) for all their
// sockets, and each session whose answer arrived runs right after the
// wait, on the same goroutine and thread, one after the other, until it
// waits again.
//
// A session is written as straight-line code (write a request, read its
// answer) and runs as a coroutine of the loop (iter.Pull): where it would
// wait for input, its SocketConn hands the thread back to the loop, which
// resumes it when the socket is readable. No goroutine is woken through
// Go's scheduler for an answer, and no answer waits for a thread to pick
// its goroutine up: with a goroutine per session, the scheduler handed
// sessions between the driver's threads for nearly every answer, which
// cost client CPU and left answers waiting (bench/pgbench-scripts,
// bench/driver-vs-pgbench).
//
// A session that blocks other than through its attached Conns or
// SleepUntil (a channel, a mutex, a timer) blocks the whole loop, and
// with it every other session of the loop, until it is done.
type SocketLoop struct {
	epfd int // holds the attached sockets, edge triggered, evfd and tfd
	evfd int // an eventfd: Interrupt wakes epoll_wait through it
	// tfd is a timer that wakes epoll_wait at the nearest sleep's end,
	// armed for armed (zero: disarmed): to the microsecond, where
	// epoll_wait's own timeout is in whole milliseconds and a session at
	// a fixed rate would start up to a millisecond late.
	tfd   int
	armed time.Time
	conns []*SocketConn
	tasks []*task
	cur   *task // the session running now, nil in the loop itself
	ctx   context.Context
	live  int
	ev    []unix.EpollEvent

	yielded time.Time // when the loop last passed through Go's scheduler
}

// task is one session of the loop and what it waits for.
type task struct {
	yield  func(struct{}) bool
	next   func() (struct{}, bool)
	stop   func()
	conn   *SocketConn     // the socket it waits on, nil if none
	until  time.Time       // the end of its sleep (zero: not sleeping)
	cancel <-chan struct{} // ends its sleep early
	result error           // what its wait returns
	done   bool
}

// ErrSocketLoopEnded is what a session's wait returns when the loop ended
// before the session did (Run failed): the session should return.
var ErrSocketLoopEnded = errors.New("socket: the event loop ended")

// errStopped resumes a sleep whose cancel channel closed.
var errStopped = errors.New("socket: sleep stopped")

// NewSocketLoop creates an event loop with no sessions.
func NewSocketLoop() (*SocketLoop, error) {
	ep, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("socket: epoll_create1: %w", err)
	}
	ev, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		unix.Close(ep)
		return nil, fmt.Errorf("socket: eventfd: %w", err)
	}
	tfd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_CLOEXEC|unix.TFD_NONBLOCK)
	if err != nil {
		unix.Close(ev)
		unix.Close(ep)
		return nil, fmt.Errorf("socket: timerfd_create: %w", err)
	}
	// Fd 0 in an event names the eventfd, timerSlot the timer, k+1 the
	// attached SocketConn k.
	for fd, slot := range map[int]int32{ev: 0, tfd: timerSlot} {
		if err := unix.EpollCtl(ep, unix.EPOLL_CTL_ADD, fd, &unix.EpollEvent{Events: unix.EPOLLIN, Fd: slot}); err != nil {
			unix.Close(tfd)
			unix.Close(ev)
			unix.Close(ep)
			return nil, fmt.Errorf("socket: epoll_ctl: %w", err)
		}
	}
	return &SocketLoop{epfd: ep, evfd: ev, tfd: tfd, ev: make([]unix.EpollEvent, 64)}, nil
}

// timerSlot is the timer's number in an epoll event.
const timerSlot = -1

// Attach makes c wait through the loop: from now until Close, c's reads
// and writes may only be called by the loop's sessions (in Run). c leaves
// its own epoll instance meanwhile, so that Go's poller is not woken for
// its input as well.
func (l *SocketLoop) Attach(c *SocketConn) error {
	if c.loop != nil {
		return errors.New("socket: the connection is attached to a loop already")
	}
	if err := unix.EpollCtl(c.epfd, unix.EPOLL_CTL_DEL, c.fd, nil); err != nil {
		return fmt.Errorf("socket: epoll_ctl: %w", err)
	}
	if err := c.control(l.epfd, unix.EPOLL_CTL_ADD, unix.EPOLLET, int32(len(l.conns)+1), false); err != nil {
		c.control(c.epfd, unix.EPOLL_CTL_ADD, 0, int32(c.fd), false)
		return err
	}
	c.loop, c.slot = l, len(l.conns)+1
	l.conns = append(l.conns, c)
	return nil
}

// Close gives the attached Conns back to their own epoll instances, with
// the deadline set while they were attached, and closes the loop.
func (l *SocketLoop) Close() error {
	var errs []error
	for _, c := range l.conns {
		unix.EpollCtl(l.epfd, unix.EPOLL_CTL_DEL, c.fd, nil)
		c.loop = nil
		errs = append(errs, c.control(c.epfd, unix.EPOLL_CTL_ADD, 0, int32(c.fd), false))
		if dl := c.dl.Swap(0); dl != 0 {
			errs = append(errs, c.ep.SetReadDeadline(time.Unix(0, dl)))
		}
	}
	l.conns = nil
	errs = append(errs, unix.Close(l.tfd), unix.Close(l.evfd), unix.Close(l.epfd))
	return errors.Join(errs...)
}

// Interrupt wakes the loop, from any goroutine, to look at deadlines and
// cancel channels again.
func (l *SocketLoop) Interrupt() {
	var one = [8]byte{1}
	unix.Write(l.evfd, one[:])
}

// Run runs each session to its end on this goroutine, interleaved at
// their waits, and returns when all have returned. When ctx ends, every
// waiting session's wait returns ctx's error.
//
// The goroutine is not locked to its thread: every yieldEvery it passes
// through Go's scheduler, which may move it to another thread, and a
// locked goroutine could only go back to its own thread by waking it and
// stopping the one that took it up (two futex wake-ups and two context
// switches each time).
func (l *SocketLoop) Run(ctx context.Context, sessions []func()) error {
	l.ctx = ctx
	defer context.AfterFunc(ctx, l.Interrupt)()
	for _, f := range sessions {
		t := &task{}
		t.next, t.stop = iter.Pull(func(yield func(struct{}) bool) {
			t.yield = yield
			f()
		})
		l.tasks = append(l.tasks, t)
	}
	// A session still suspended when Run returns early is ended: its
	// wait returns ErrSocketLoopEnded.
	defer func() {
		for _, t := range l.tasks {
			t.stop()
		}
		l.tasks = nil
	}()
	l.live = len(l.tasks)
	for _, t := range l.tasks {
		l.resume(t, nil)
	}
	for l.live > 0 {
		// A system call Go knows of (Syscall), so that the loop's
		// processor can serve others while the thread waits; a raw one
		// would hold it through each wait, where the collector and the
		// scheduler need it.
		n, err := unix.EpollWait(l.epfd, l.ev, l.timeout())
		if err != nil && err != unix.EINTR {
			return fmt.Errorf("socket: epoll_wait: %w", err)
		}
		for _, ev := range l.ev[:max(n, 0)] {
			var b [8]byte
			switch ev.Fd {
			case 0:
				unix.Read(l.evfd, b[:])
				continue
			case timerSlot:
				// Fired: the next sleep arms it again, even for the same
				// end, should the clocks have read it as not yet come.
				unix.Read(l.tfd, b[:])
				l.armed = time.Time{}
				continue
			}
			if t := l.conns[ev.Fd-1].waiter; t != nil {
				l.resume(t, nil)
			}
		}
		now := l.expire()
		if now.Sub(l.yielded) >= yieldEvery {
			runtime.Gosched()
			l.yielded = now
		}
	}
	return nil
}

// yieldEvery is how often the loop passes through Go's scheduler. Go's
// monitor (sysmon) takes a goroutine that has not been through the
// scheduler for 10 ms for one that will not give its processor up: it
// signals the thread (tgkill), or takes the processor if the thread is
// waiting in epoll_wait, and after taking one it polls every 20 µs for a
// while. A loop that never parked met that every 10 ms, at a cost in
// signals, sleeps and transactions/s that yielding every 5 ms removes
// (bench/pgbench-scripts).
// A single wait longer than 10 ms (slow statements, think time) still
// loses the processor once per wait; the yield keeps busy loops and loops
// that wait briefly out of the monitor's way.
const yieldEvery = 5 * time.Millisecond

// resume runs t until it waits again or returns; its wait returns result.
func (l *SocketLoop) resume(t *task, result error) {
	t.result, t.until, t.cancel = result, time.Time{}, nil
	l.cur = t
	_, more := t.next()
	l.cur = nil
	if !more && !t.done {
		t.done = true
		l.live--
	}
}

// timeout is how long epoll_wait may wait, in milliseconds (-1: until a
// socket, the timer or Interrupt wakes it): until the nearest deadline,
// the timer armed for the nearest sleep's end.
func (l *SocketLoop) timeout() int {
	var deadline, sleep int64
	for _, t := range l.tasks {
		switch {
		case t.done:
		case t.conn != nil:
			if at := t.conn.dl.Load(); at != 0 && (deadline == 0 || at < deadline) {
				deadline = at
			}
		case !t.until.IsZero():
			if at := t.until.UnixNano(); sleep == 0 || at < sleep {
				sleep = at
			}
		}
	}
	now := time.Now()
	if sleep != 0 && sleep <= now.UnixNano() {
		return 0
	}
	if !l.arm(now, sleep) && (deadline == 0 || sleep < deadline) {
		deadline = sleep
	}
	if deadline == 0 {
		return -1
	}
	d := deadline - now.UnixNano()
	if d <= 0 {
		return 0
	}
	return int((d + int64(time.Millisecond) - 1) / int64(time.Millisecond))
}

// arm sets the timer to wake the loop at the Unix nanosecond at (0:
// disarms it), unless it is set so already; false if it could not. The
// loop then wakes a millisecond late at most: epoll_wait's timeout is
// the sleep's end.
func (l *SocketLoop) arm(now time.Time, at int64) bool {
	want := time.Time{}
	if at != 0 {
		want = time.Unix(0, at)
	}
	if want.Equal(l.armed) {
		return true
	}
	var spec unix.ItimerSpec
	if at != 0 {
		spec.Value = unix.NsecToTimespec(max(at-now.UnixNano(), 1))
	}
	if err := unix.TimerfdSettime(l.tfd, 0, &spec, nil); err != nil {
		l.armed = time.Time{}
		return at == 0
	}
	l.armed = want
	return true
}

// expire resumes the sessions whose sleep ended or was stopped, whose
// socket's deadline passed, or all waiting ones when the loop's context
// ended.
func (l *SocketLoop) expire() time.Time {
	ctxErr := l.ctx.Err()
	now := time.Now()
	for _, t := range l.tasks {
		if t.done || (t.conn == nil && t.until.IsZero()) {
			continue
		}
		switch {
		case ctxErr != nil:
			l.resume(t, ctxErr)
		case t.conn != nil:
			if dl := t.conn.dl.Load(); dl != 0 && now.UnixNano() >= dl {
				l.resume(t, os.ErrDeadlineExceeded)
			}
		case closed(t.cancel):
			l.resume(t, errStopped)
		case !now.Before(t.until):
			l.resume(t, nil)
		}
	}
	return now
}

func closed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// wait suspends the running session until c has input (or an error or
// hang-up), its deadline passes or the loop's context ends.
func (l *SocketLoop) wait(c *SocketConn) error {
	t := l.cur
	if t == nil {
		return errors.New("socket: a connection attached to a loop was used outside the loop's sessions")
	}
	if c.expired() {
		return os.ErrDeadlineExceeded
	}
	c.waiter, t.conn = t, c
	more := t.yield(struct{}{})
	c.waiter, t.conn = nil, nil
	if !more {
		return ErrSocketLoopEnded
	}
	return t.result
}

// SleepUntil suspends the running session until at, or until stop is
// closed (stopped is true), or the loop's context ends (its error). The
// session's sleep does not hold up the loop's other sessions.
func (l *SocketLoop) SleepUntil(at time.Time, stop <-chan struct{}) (stopped bool, err error) {
	t := l.cur
	if t == nil {
		return false, errors.New("socket: SleepUntil called outside the loop's sessions")
	}
	if closed(stop) {
		return true, nil
	}
	if !time.Now().Before(at) {
		return false, nil
	}
	t.until, t.cancel = at, stop
	more := t.yield(struct{}{})
	if !more {
		return false, ErrSocketLoopEnded
	}
	if t.result == errStopped {
		return true, nil
	}
	return false, t.result
}
