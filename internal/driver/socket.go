// A session's socket (SocketConn): a stream socket that wakes the
// session only when input arrives.
//
// Go's network poller registers every socket for input and output, edge
// triggered. On a Unix socket the kernel signals "writable" each time the
// peer consumes what was written, so a session that writes a request and
// waits for the answer is woken twice per statement: once when the server
// reads the request (nothing to do: the thread sleeps again) and once when
// the answer arrives. The extra wake-up costs the driver a context switch
// per statement and the server's process the work of waking it; pgbench,
// which polls for input only, pays neither (bench/pgbench-scripts:
// context switches per statement).
//
// A SocketConn owns a duplicate of the socket outside Go's poller and waits on a
// private epoll instance that holds the socket for input only; Go's poller
// watches that epoll instance, which becomes readable only when the socket
// has input (or a hang-up or error). Writes are tried directly; a write
// that would block waits for output space the same way, on demand.

package driver

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// ErrNotSocket is returned by TakeSocket for a connection without a file
// descriptor of its own (TLS, a pipe in a test).
var ErrNotSocket = errors.New("not a plain socket")

// SocketConn is a stream socket waited on for input only. It is not safe for
// concurrent use, except Close and the deadline setters, which may be
// called while a read or write waits.
type SocketConn struct {
	fd   int             // the socket, non-blocking, outside Go's poller
	epfd int             // the epoll instance holding fd (ep's descriptor)
	ep   *os.File        // epfd, inside Go's poller
	wait syscall.RawConn // ep's: waits until ep is readable
	out  bool            // fd is registered for output too (a write waits)

	// While attached to a SocketLoop, the socket waits through the loop
	// instead of epfd, and the deadline is dl (Unix nanoseconds, 0 for
	// none), which the loop reads.
	loop   *SocketLoop
	slot   int   // the socket's number in the loop's events
	waiter *task // the loop's session waiting for the socket
	dl     atomic.Int64
	local  net.Addr
	peer   net.Addr

	// The state of one call, kept here so that the callbacks, bound
	// once, allocate nothing per statement.
	msg, buf     []byte
	written, got int
	err          error
	onExchange   func(uintptr) bool
	onRead       func(uintptr) bool
	onWrite      func(uintptr) bool
}

// TakeSocket takes nc's socket over: it duplicates the descriptor, registers the
// duplicate for input in a new epoll instance, and closes nc, which
// removes the original from Go's poller (the socket stays open through the
// duplicate). On error nc is left as it was.
func TakeSocket(nc net.Conn) (*SocketConn, error) {
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return nil, ErrNotSocket
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNotSocket, err)
	}
	fd := -1
	var dupErr error
	if err := raw.Control(func(s uintptr) { fd, dupErr = unix.FcntlInt(s, unix.F_DUPFD_CLOEXEC, 0) }); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNotSocket, err)
	}
	if dupErr != nil {
		return nil, fmt.Errorf("duplicate the socket: %w", dupErr)
	}
	c := &SocketConn{fd: fd, local: nc.LocalAddr(), peer: nc.RemoteAddr()}
	if err := c.open(); err != nil {
		unix.Close(fd)
		return nil, err
	}
	nc.Close()
	c.onExchange, c.onRead, c.onWrite = c.exchange, c.read, c.write
	return c, nil
}

// open makes the socket non-blocking and creates the epoll instance that
// Go's poller watches for it.
func (c *SocketConn) open() error {
	if err := unix.SetNonblock(c.fd, true); err != nil {
		return fmt.Errorf("socket: non-blocking: %w", err)
	}
	ep, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return fmt.Errorf("socket: epoll_create1: %w", err)
	}
	ev := unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLRDHUP, Fd: int32(c.fd)}
	if err := unix.EpollCtl(ep, unix.EPOLL_CTL_ADD, c.fd, &ev); err != nil {
		unix.Close(ep)
		return fmt.Errorf("socket: epoll_ctl: %w", err)
	}
	// A non-blocking descriptor given to os.NewFile goes into Go's
	// poller; SetReadDeadline fails on one that did not.
	if err := unix.SetNonblock(ep, true); err != nil {
		unix.Close(ep)
		return fmt.Errorf("socket: non-blocking epoll: %w", err)
	}
	c.epfd, c.ep = ep, os.NewFile(uintptr(ep), "socket-input-poll")
	if err := c.ep.SetReadDeadline(time.Time{}); err != nil {
		c.ep.Close()
		return fmt.Errorf("socket: the epoll instance is not pollable: %w", err)
	}
	if c.wait, err = c.ep.SyscallConn(); err != nil {
		c.ep.Close()
		return fmt.Errorf("socket: %w", err)
	}
	return nil
}

// Exchange writes msg whole, then waits for input and reads what has
// arrived into buf (at least one byte). The write happens inside the wait's
// first callback, after Go's poller is armed for this wait, so the answer
// is seen however soon it comes: one write(2), one read(2) that usually
// finds nothing yet, and once woken one read(2).
func (c *SocketConn) Exchange(msg, buf []byte) (int, error) {
	if c.loop != nil {
		if _, err := c.loopWrite(msg); err != nil {
			return 0, err
		}
		return c.loopRead(buf)
	}
	c.msg, c.buf, c.written, c.got, c.err = msg, buf, 0, 0, nil
	if err := c.wait.Read(c.onExchange); err != nil {
		return 0, err
	}
	if c.err == nil && c.written < len(msg) { // the socket's buffer was full
		if _, err := c.Write(msg[c.written:]); err != nil {
			return 0, err
		}
		return c.Read(buf)
	}
	return c.got, c.err
}

func (c *SocketConn) exchange(uintptr) bool {
	if c.written < len(c.msg) {
		n, err := rawIO(unix.SYS_WRITE, c.fd, c.msg[c.written:])
		switch {
		case err == unix.EAGAIN:
			return true // Exchange writes the rest, waiting for space
		case err != nil:
			c.err = err
			return true
		}
		c.written += n
		if c.written < len(c.msg) {
			return true
		}
		// Read at once, although the answer is rarely there yet. The
		// read(2) that fails is not wasted: the write woke the server's
		// process on this core, and the system call's return likely lets
		// it run now rather than after the driver's next goroutines
		// (bench/driver-vs-pgbench measured both).
	}
	return c.read(0)
}

// Read waits for input and reads what has arrived into buf.
func (c *SocketConn) Read(buf []byte) (int, error) {
	if len(buf) == 0 {
		return 0, nil
	}
	if c.loop != nil {
		return c.loopRead(buf)
	}
	c.buf, c.got, c.err = buf, 0, nil
	if err := c.wait.Read(c.onRead); err != nil {
		return 0, err
	}
	return c.got, c.err
}

func (c *SocketConn) read(uintptr) bool {
	n, err := rawIO(unix.SYS_READ, c.fd, c.buf)
	switch {
	case err == unix.EAGAIN:
		return false
	case err != nil:
		c.err = err
	case n == 0:
		c.err = io.EOF
	default:
		c.got = n
	}
	return true
}

// Write writes msg whole. When the socket's buffer is full it registers
// the socket for output until the rest is written.
func (c *SocketConn) Write(msg []byte) (int, error) {
	if c.loop != nil {
		return c.loopWrite(msg)
	}
	c.msg, c.written, c.err = msg, 0, nil
	for c.written < len(msg) {
		if err := c.wait.Read(c.onWrite); err != nil {
			c.watchOutput(false) // a deadline: the next call starts clean
			return c.written, err
		}
		if c.err != unix.EAGAIN {
			break
		}
		if err := c.watchOutput(true); err != nil {
			return c.written, err
		}
	}
	if err := c.watchOutput(false); err != nil && c.err == nil {
		c.err = err
	}
	if c.err == unix.EAGAIN {
		c.err = nil
	}
	return c.written, c.err
}

// write writes until done or the buffer is full. When the socket waits
// for output space, EAGAIN means "wait"; otherwise it is handed to Write,
// which registers for output first.
func (c *SocketConn) write(uintptr) bool {
	for c.written < len(c.msg) {
		n, err := rawIO(unix.SYS_WRITE, c.fd, c.msg[c.written:])
		if err == unix.EAGAIN {
			c.err = err
			return !c.out
		}
		if err != nil {
			c.err = err
			return true
		}
		c.written += n
	}
	c.err = nil
	return true
}

// watchOutput adds or removes output readiness from the socket's
// registration.
func (c *SocketConn) watchOutput(on bool) error {
	if c.out == on {
		return nil
	}
	return c.control(c.epfd, unix.EPOLL_CTL_MOD, 0, int32(c.fd), on)
}

// control adds (op EPOLL_CTL_ADD) or changes (EPOLL_CTL_MOD) the socket's
// registration in epfd: for input, with flags, and for output if out;
// key comes back in its events. c.out records the output registration.
func (c *SocketConn) control(epfd, op int, flags uint32, key int32, out bool) error {
	ev := unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLRDHUP | flags, Fd: key}
	if out {
		ev.Events |= unix.EPOLLOUT
	}
	if err := unix.EpollCtl(epfd, op, c.fd, &ev); err != nil {
		return fmt.Errorf("socket: epoll_ctl: %w", err)
	}
	c.out = out
	return nil
}

// loopRead reads what has arrived into buf, waiting through the loop
// while nothing has. As in Exchange, the first read(2) is tried at once.
func (c *SocketConn) loopRead(buf []byte) (int, error) {
	if c.expired() {
		return 0, os.ErrDeadlineExceeded
	}
	for {
		n, err := rawIO(unix.SYS_READ, c.fd, buf)
		switch {
		case err == unix.EAGAIN:
			if err := c.loop.wait(c); err != nil {
				return 0, err
			}
			continue
		case err != nil:
			return 0, err
		case n == 0:
			return 0, io.EOF
		}
		return n, nil
	}
}

// loopWrite writes msg whole; when the socket's buffer is full it waits
// through the loop for output space too.
func (c *SocketConn) loopWrite(msg []byte) (int, error) {
	if c.expired() {
		return 0, os.ErrDeadlineExceeded
	}
	written := 0
	var err error
	for written < len(msg) {
		n, werr := rawIO(unix.SYS_WRITE, c.fd, msg[written:])
		if werr == unix.EAGAIN {
			if err = c.loopOutput(true); err == nil {
				err = c.loop.wait(c)
			}
			if err != nil {
				break
			}
			continue
		}
		if werr != nil {
			err = werr
			break
		}
		written += n
	}
	if oerr := c.loopOutput(false); err == nil {
		err = oerr
	}
	return written, err
}

// loopOutput adds or removes output readiness from the socket's
// registration in its loop.
func (c *SocketConn) loopOutput(on bool) error {
	if c.out == on {
		return nil
	}
	return c.control(c.loop.epfd, unix.EPOLL_CTL_MOD, unix.EPOLLET, int32(c.slot), on)
}

// SetDeadline, SetReadDeadline and SetWriteDeadline all bound the wait on
// the epoll instance, through which reads and writes both wait; a deadline
// in the past interrupts a waiting call with os.ErrDeadlineExceeded.
// While the socket is attached to a SocketLoop, they may be called from any
// goroutine too: the loop is woken to look at the new deadline.
func (c *SocketConn) SetDeadline(t time.Time) error      { return c.setDeadline(t) }
func (c *SocketConn) SetReadDeadline(t time.Time) error  { return c.setDeadline(t) }
func (c *SocketConn) SetWriteDeadline(t time.Time) error { return c.setDeadline(t) }

func (c *SocketConn) setDeadline(t time.Time) error {
	if l := c.loop; l != nil {
		var dl int64
		if !t.IsZero() {
			dl = max(t.UnixNano(), 1)
		}
		c.dl.Store(dl)
		l.Interrupt()
		return nil
	}
	return c.ep.SetReadDeadline(t)
}

// expired says whether the deadline set while attached to a loop has
// passed.
func (c *SocketConn) expired() bool {
	dl := c.dl.Load()
	return dl != 0 && time.Now().UnixNano() >= dl
}

func (c *SocketConn) LocalAddr() net.Addr  { return c.local }
func (c *SocketConn) RemoteAddr() net.Addr { return c.peer }

// Close closes the socket and its epoll instance. Closing the epoll file
// first wakes a waiting call and returns only once no call is inside a
// callback (os.File's Close waits for its users), so the socket's
// descriptor is not closed under a read or write that uses it.
func (c *SocketConn) Close() error {
	err := c.ep.Close()
	if errors.Is(err, os.ErrClosed) {
		return err // closed before: the descriptor number may be another file's now
	}
	return errors.Join(err, unix.Close(c.fd))
}

// rawIO is read(2) or write(2) on the non-blocking socket without telling
// the Go scheduler about it (RawSyscall). With unix.Read/Write the
// scheduler marks the thread as in a system call; the wake-up of the
// server's process that a write causes often preempts the thread inside
// the call, the runtime's monitor then hands its processor to another
// thread, and the context switches that follow cost more than the I/O. A
// non-blocking call returns at once, so nothing else needs the processor
// meanwhile.
func rawIO(trap uintptr, fd int, p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	n, _, errno := unix.RawSyscall(trap, uintptr(fd), uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
	if errno != 0 {
		return -1, errno
	}
	return int(n), nil
}
