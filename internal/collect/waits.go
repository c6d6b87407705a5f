package collect

import (
	"context"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/obsbench/obsbench/internal/result"
)

// SessionWait is what one active session of the server is doing at one
// moment, as the engine reports it.
type SessionWait struct {
	// PID is the session's server process on this machine (or its thread,
	// for a threaded server), 0 if unknown.
	PID int
	// Wait is the engine's wait ("Lock:transactionid"); empty when the
	// session is active and reports no wait, which engines count as CPU.
	Wait string
	// Kernel is the kernel wait of a session that reports no wait, as a
	// BatchWaitSource read it at the sample's moment ("pipe_write",
	// "syscall:write"; KernelWaitOf), "" when it did not or the process
	// was running.
	Kernel string
}

// WaitSource reports the waits of the server's active client sessions
// right now. Engines implement it over their own session view.
type WaitSource interface {
	ActiveWaits(ctx context.Context) ([]SessionWait, error)
}

// IdleKernelWaiter is a WaitSource whose session view lags: a session it
// lists as running may already have finished its statement and be waiting
// for its client's next one by the time its kernel wait is read (MariaDB's
// processlist keeps the last command of a thread that is between
// statements). Such a sample is not counted.
type IdleKernelWaiter interface {
	// IdleKernelWait says whether the kernel wait (a wait channel such
	// as "poll_schedule_timeout", or "syscall:poll") is a wait for the
	// client.
	IdleKernelWait(kernel string) bool
}

// CPULabel is the label of active sessions that report no wait and whose
// process is not blocked in the kernel either.
const CPULabel = "CPU"

// Waits is plain data, kept in package result with the runs it is part of.
type Waits = result.Waits

// WaitSampler samples a WaitSource at a fixed interval. Samples are kept in
// two profiles, one for while an observer is switched on and one for while
// it is off, so that an alternation run yields both; a run with one
// condition throughout uses the "on" profile only. Sampling can be paused,
// which is how the sampler's own cost is measured.
type WaitSampler struct {
	src      WaitSource
	interval time.Duration
	os       bool         // read /proc/PID/wchan for sessions reporting no wait
	kernel   *kernelWaits // the sampling goroutine's open /proc files

	on       atomic.Bool // the observer's state: which profile gets samples
	paused   atomic.Bool
	batching atomic.Bool   // the server takes the samples (batch.go)
	stopAt   atomic.Int64  // when Stop was called, Unix ns; 0 before
	resumed  chan struct{} // Pause(false) wakes a paused batch loop

	mu      sync.Mutex
	states  []state // changes of on and paused, for batches (batch.go)
	onW     Waits
	offW    Waits
	err     error
	cancel  context.CancelFunc
	done    chan struct{}
	started bool
}

// NewWaitSampler samples src every interval. When local is true the
// server's processes are on this machine and a session that reports no
// wait is looked up in /proc: its kernel wait channel, when it has one,
// replaces CPU.
func NewWaitSampler(src WaitSource, interval time.Duration, local bool) *WaitSampler {
	s := &WaitSampler{src: src, interval: interval, os: local}
	s.on.Store(true)
	s.onW.Counts = map[string]int64{}
	s.offW.Counts = map[string]int64{}
	s.states = []state{{on: true}}
	s.resumed = make(chan struct{}, 1)
	return s
}

// SetObserverOn says whether the observer is in force from now on.
func (s *WaitSampler) SetObserverOn(on bool) {
	s.on.Store(on)
	s.record()
}

// Pause stops taking samples (true) or resumes (false). Sampling one at
// a time, the ticker keeps running so that resuming needs no set-up.
func (s *WaitSampler) Pause(p bool) {
	s.paused.Store(p)
	s.record()
	if !p {
		select {
		case s.resumed <- struct{}{}:
		default:
		}
	}
}

// Start begins sampling in a goroutine.
func (s *WaitSampler) Start(ctx context.Context) {
	ctx, s.cancel = context.WithCancel(ctx)
	s.stopAt.Store(0)
	s.done = make(chan struct{})
	s.started = true
	go s.loop(ctx)
}

func (s *WaitSampler) loop(ctx context.Context) {
	defer close(s.done)
	if b, ok := s.src.(BatchWaitSource); ok {
		if n := batchSize(s.interval); n >= 2 && s.batchLoop(ctx, b, n) {
			return
		}
	}
	s.kernel = newKernelWaits()
	defer s.kernel.close()
	t := time.NewTicker(s.interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if s.stopAt.Load() != 0 {
			return // Stop waits for a batch loop that fell back to this one
		}
		if s.paused.Load() {
			continue
		}
		on := s.on.Load()
		waits, err := s.src.ActiveWaits(ctx)
		if err != nil {
			if ctx.Err() == nil {
				s.fail(err)
			}
			return
		}
		// Labels first, outside the lock: they read /proc.
		s.kernel.next()
		labels := make([]string, len(waits))
		for i, sw := range waits {
			labels[i] = s.label(sw)
		}
		s.mu.Lock()
		s.file(on, labels)
		s.mu.Unlock()
	}
}

// file counts one sample's labels in the profile of the observer's state
// on; s.mu is held.
func (s *WaitSampler) file(on bool, labels []string) {
	w := &s.offW
	if on {
		w = &s.onW
	}
	w.Ticks++
	for _, l := range labels {
		if l != "" {
			w.Counts[l]++
		}
	}
}

// fail keeps the sampler's first error.
func (s *WaitSampler) fail(err error) {
	s.mu.Lock()
	if s.err == nil {
		s.err = err
	}
	s.mu.Unlock()
}

// label names a session's sample; "" when the session turns out to be
// waiting for its client, not working.
func (s *WaitSampler) label(sw SessionWait) string {
	if sw.Wait != "" {
		return sw.Wait
	}
	k := sw.Kernel
	if k == "" && s.os && sw.PID > 0 && s.kernel != nil {
		k = s.kernel.read(sw.PID)
	}
	if k != "" {
		if iw, ok := s.src.(IdleKernelWaiter); ok && iw.IdleKernelWait(k) {
			return ""
		}
		return "OS:" + k
	}
	return CPULabel
}

// Stop ends sampling and returns the profiles taken while the observer was
// on and while it was off.
func (s *WaitSampler) Stop() (on, off Waits, err error) {
	if s.started {
		// A batch in flight is let finish (its samples up to now are
		// kept): cancelling its query would break the session's
		// connection mid-answer, which the server logs as an error.
		s.stopAt.Store(time.Now().UnixNano())
		if s.batching.Load() {
			select {
			case <-s.done:
			case <-time.After(2*batchSpan + time.Second):
			}
		}
		s.cancel()
		<-s.done
		s.started = false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.onW, s.offW, s.err
}

// KernelWait names what process pid is blocked on in the kernel: its wait
// channel (/proc/PID/wchan, e.g. "pipe_write"), or "" when it is running
// or cannot be read. A process sleeping in a system call with no wait
// channel shown is named by the call ("syscall:write"), when
// /proc/PID/syscall is readable.
func KernelWait(pid int) string {
	p := "/proc/" + strconv.Itoa(pid)
	if b, err := os.ReadFile(p + "/wchan"); err == nil {
		if w := wchanName(b); w != "" {
			return w
		}
	}
	b, err := os.ReadFile(p + "/syscall")
	if err != nil {
		return ""
	}
	return syscallWait(b)
}

// KernelWaitOf names a kernel wait as KernelWait does, from the contents
// of a process's /proc/PID/wchan and /proc/PID/syscall read elsewhere (""
// for a file not read).
func KernelWaitOf(wchan, syscall string) string {
	if w := wchanName([]byte(wchan)); w != "" {
		return w
	}
	return syscallWait([]byte(syscall))
}

// syscallNames names the x86-64 system calls a database backend blocks in.
var syscallNames = map[int]string{
	0: "read", 1: "write", 7: "poll", 17: "pread64", 18: "pwrite64", 20: "writev",
	23: "select", 44: "sendto", 45: "recvfrom", 74: "fsync", 75: "fdatasync",
	202: "futex", 232: "epoll_wait", 270: "pselect6", 281: "epoll_pwait",
}
