package postgres

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// LogStream is the managed server's standard error as a live stream: the
// server writes into a pipe and obsbench, its client, reads the pipe and
// appends what it reads to the server log file. With logging_collector off,
// every backend writes its log messages (statements, plans) straight into
// this pipe, so the stream is the PostgreSQL analogue of a trace streamed
// to a client.
//
// How the server behaves when the client is slow is a setting of the pipe:
// normally a backend whose write finds the pipe full waits for the client
// (nothing is lost); with SetLossy(true) the pipe is non-blocking and the
// write fails instead, and PostgreSQL drops the message.
type LogStream struct {
	r, w *os.File
	wfd  int // the write end, kept to switch its blocking mode
	out  *os.File

	rate  atomic.Int64 // bytes per second the client reads; 0: unlimited
	bytes atomic.Int64 // bytes read so far

	// faults counts the server's complaints that it could not write its
	// own log (a full log device); lastFault is the latest.
	faults    atomic.Int64
	lastFault atomic.Value // string
	tail      []byte       // the end of the previous read, for a line cut across reads

	mu   sync.Mutex
	done chan struct{}
}

// openLogStream creates the pipe and starts the client appending to path.
func openLogStream(path string, uid, gid int) (*LogStream, error) {
	var fds [2]int
	if err := syscall.Pipe2(fds[:], syscall.O_CLOEXEC); err != nil {
		return nil, fmt.Errorf("create the server's log pipe: %w", err)
	}
	out, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		syscall.Close(fds[0])
		syscall.Close(fds[1])
		return nil, fmt.Errorf("create server log: %w", err)
	}
	if err := os.Chown(path, uid, gid); err != nil {
		out.Close()
		return nil, err
	}
	s := &LogStream{
		r: os.NewFile(uintptr(fds[0]), "server-log-pipe-r"), w: os.NewFile(uintptr(fds[1]), "server-log-pipe-w"),
		wfd: fds[1], out: out, done: make(chan struct{}),
	}
	go s.copy()
	return s, nil
}

// copy is the client: it reads what the server wrote, at most at the
// configured rate, and appends it to the log file.
func (s *LogStream) copy() {
	defer close(s.done)
	err := readPaced(s.r, &s.rate, func(p []byte) {
		s.scanFaults(p)
		s.out.Write(p)
		s.bytes.Add(int64(len(p)))
	})
	if err != io.EOF {
		fmt.Fprintf(s.out, "obsbench: reading the server's log stream: %v\n", err)
	}
}

// readPaced reads r until it fails (io.EOF at its end), handing each
// read to took, at most *rate bytes a second (0: as fast as it can); the
// rate may change meanwhile. A paced reader reads small chunks, so that
// it drains a pipe steadily: the pipe's writer sees a slow client, not a
// client that takes 64 KiB now and then.
func readPaced(r io.Reader, rate *atomic.Int64, took func([]byte)) error {
	buf := make([]byte, 64<<10)
	for {
		chunk := buf
		bps := rate.Load()
		if bps > 0 {
			chunk = buf[:min(len(buf), 4096)]
		}
		n, err := r.Read(chunk)
		if n > 0 {
			took(chunk[:n])
			if bps > 0 {
				time.Sleep(time.Duration(float64(n) / float64(bps) * float64(time.Second)))
			}
		}
		if err != nil {
			return err
		}
	}
}

// logWriteFault is what PostgreSQL's logging collector writes to its
// stderr when it cannot write a log file (a full disk, an I/O error).
var logWriteFault = []byte("could not write to log file")

func (s *LogStream) scanFaults(p []byte) {
	buf := append(s.tail, p...)
	for {
		i := bytes.Index(buf, logWriteFault)
		if i < 0 {
			break
		}
		end := bytes.IndexByte(buf[i:], '\n')
		if end < 0 {
			break // the rest of the line comes with the next read
		}
		s.faults.Add(1)
		s.lastFault.Store(string(buf[i : i+end]))
		buf = buf[i+end:]
	}
	// Keep what could be the start of a complaint cut by this read.
	keep := min(len(buf), len(logWriteFault)+256)
	s.tail = append(s.tail[:0], buf[len(buf)-keep:]...)
}

// Faults is how many times the server said it could not write its log,
// and the latest such message.
func (s *LogStream) Faults() (int64, string) {
	last, _ := s.lastFault.Load().(string)
	return s.faults.Load(), last
}

// SetRate makes the client read at most bytesPerSecond (0: as fast as it
// can).
func (s *LogStream) SetRate(bytesPerSecond int64) { s.rate.Store(bytesPerSecond) }

// SetLossy switches the server's writes between waiting for the client
// (false) and failing, so that the message is lost, when the pipe is full
// (true). The pipe's file description is shared by every server process,
// so the switch applies to all of them at once.
func (s *LogStream) SetLossy(lossy bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := syscall.SetNonblock(s.wfd, lossy); err != nil {
		return fmt.Errorf("switch the server's log pipe to lossy=%v: %w", lossy, err)
	}
	return nil
}

// Bytes is how many bytes the client has read.
func (s *LogStream) Bytes() int64 { return s.bytes.Load() }

// Path is the file the client appends to.
func (s *LogStream) Path() string { return s.out.Name() }

// writer is the pipe's write end, handed to the server as its stdout and
// stderr.
func (s *LogStream) writer() *os.File { return s.w }

// close ends the stream once the server has exited: the client reads what
// is left and stops.
func (s *LogStream) close() {
	s.SetRate(0)
	s.w.Close()
	select {
	case <-s.done:
	case <-time.After(5 * time.Second):
		// A server process still holds the pipe: stop reading anyway.
	}
	s.r.Close()
	s.out.Close()
}
