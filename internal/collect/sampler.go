package collect

import (
	"bytes"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"sync"
	"time"

	"github.com/obsbench/obsbench/internal/result"
)

// snapshot is cumulative CPU ticks at one moment.
type snapshot struct {
	at                          time.Time
	server, driver, busy, steal int64
}

// Sampler records CPU every second of a window: the server's process tree,
// this process (the driver), and the whole machine from /proc/stat.
type Sampler struct {
	root    int
	also    []int // more process trees counted as the server's (a standby)
	drivers []int // more processes counted as the driver's (local workers)
	mu      sync.Mutex
	snaps   []snapshot
	err     error
	stop    chan struct{}
	done    chan struct{}
}

// StartSampler takes the first snapshot now and one every second after,
// until Stop. serverRoot is the server's main process, 0 when the server is
// not on this machine.
func StartSampler(serverRoot int, also ...int) (*Sampler, error) {
	return startSampler(serverRoot, also, nil)
}

func startSampler(serverRoot int, also, drivers []int) (*Sampler, error) {
	s := &Sampler{root: serverRoot, also: also, drivers: drivers, stop: make(chan struct{}), done: make(chan struct{})}
	first, err := s.take(time.Now())
	if err != nil {
		return nil, err
	}
	s.snaps = append(s.snaps, first)
	go s.loop(first.at)
	return s, nil
}

func (s *Sampler) loop(start time.Time) {
	defer close(s.done)
	for k := 1; ; k++ {
		t := time.NewTimer(time.Until(start.Add(time.Duration(k) * time.Second)))
		select {
		case <-s.stop:
			t.Stop()
			return
		case now := <-t.C:
			snap, err := s.take(now)
			s.mu.Lock()
			if err != nil && s.err == nil {
				s.err = err
			}
			if err == nil {
				s.snaps = append(s.snaps, snap)
			}
			s.mu.Unlock()
		}
	}
}

// Second, Noise, Usage and CPU are plain data, kept in package result
// with the runs they are part of.
type (
	Second = result.CPUSecond
	Noise  = result.Noise
	Usage  = result.Usage
	CPU    = result.CPU
)

// Stop takes the last snapshot and returns the window's usage.
func (s *Sampler) Stop() (Usage, error) {
	close(s.stop)
	<-s.done
	last, err := s.take(time.Now())
	if err != nil {
		return Usage{}, err
	}
	if s.err != nil {
		return Usage{}, s.err
	}
	snaps := append(s.snaps, last)
	first := snaps[0]
	elapsed := last.at.Sub(first.at).Seconds()
	capacity := elapsed * float64(machineCPUs())
	sec := func(ticks int64) float64 { return float64(ticks) / userHZ }
	var u Usage
	ds := sec(last.driver - first.driver)
	u.Driver = CPU{Seconds: ds, Pct: 100 * ds / capacity}
	if s.root > 0 {
		ss := sec(last.server - first.server)
		u.Server = &CPU{Seconds: ss, Pct: 100 * ss / capacity}
	}
	other := sec(last.busy-first.busy) - sec(last.server-first.server) - ds
	u.Noise = Noise{OtherPct: 100 * max(other, 0) / capacity, StealPct: 100 * sec(last.steal-first.steal) / capacity}
	for i := 1; i < len(snaps); i++ {
		a, b := snaps[i-1], snaps[i]
		o := sec(b.busy-a.busy) - sec(b.server-a.server) - sec(b.driver-a.driver)
		u.PerSecond = append(u.PerSecond, Second{
			Server: sec(b.server - a.server), Driver: sec(b.driver - a.driver),
			Other: max(o, 0), Steal: sec(b.steal - a.steal),
		})
	}
	return u, nil
}

// Window samples CPU over a driver's measured window. Toggle fits
// driver.Config.Window; Close, safe to call again, also stops a window the
// driver never closed (an interrupted or failed run), so that the
// sampler's goroutine ends.
type Window struct {
	Root int // the server's main process, 0 if not on this machine
	// Also are more process trees of the system under test (a managed
	// standby): their CPU is the server's, not other processes' noise.
	Also []int
	// Drivers are more processes whose CPU is the driver's: worker
	// processes on this machine that run the sessions.
	Drivers []int
	Usage   Usage
	Err     error
	s       *Sampler
}

// Toggle opens (starts sampling) or closes the window.
func (w *Window) Toggle(open bool) {
	if open {
		w.s, w.Err = startSampler(w.Root, w.Also, w.Drivers)
		return
	}
	w.Close()
}

// Close stops sampling and keeps the usage; it does nothing when the
// window is not open.
func (w *Window) Close() {
	if w.s == nil {
		return
	}
	u, err := w.s.Stop()
	w.s, w.Usage = nil, u
	if w.Err == nil {
		w.Err = err
	}
}

func (s *Sampler) take(now time.Time) (snapshot, error) {
	snap := snapshot{at: now}
	self, err := readStat("self")
	if err != nil {
		return snap, err
	}
	snap.driver = self.cpuTicks
	for _, pid := range s.drivers {
		// A worker that is gone counts nothing from then on.
		if st, err := readStat(strconv.Itoa(pid)); err == nil {
			snap.driver += st.cpuTicks
		}
	}
	if s.root > 0 {
		if snap.server, err = treeTicks(s.root); err != nil {
			return snap, err
		}
		for _, pid := range s.also {
			// A companion that is gone (restarting) counts nothing.
			if n, err := treeTicks(pid); err == nil {
				snap.server += n
			}
		}
	}
	snap.busy, snap.steal, err = machineTicks()
	return snap, err
}

// machineCPUs counts the machine's CPUs in /proc/stat: /proc/stat's totals
// cover all of them, even when this process may use fewer (taskset).
func machineCPUs() int {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return runtime.NumCPU()
	}
	n := 0
	for _, line := range bytes.Split(b, []byte("\n")) {
		if len(line) > 3 && bytes.HasPrefix(line, []byte("cpu")) && line[3] >= '0' && line[3] <= '9' {
			n++
		}
	}
	return max(n, 1)
}

// machineTicks reads the machine's busy and steal time from /proc/stat.
func machineTicks() (busy, steal int64, err error) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0, err
	}
	line, _, _ := bytes.Cut(b, []byte("\n"))
	f := bytes.Fields(line)
	// cpu user nice system idle iowait irq softirq steal guest guest_nice;
	// guest time is already counted in user.
	if len(f) < 9 || string(f[0]) != "cpu" {
		return 0, 0, fmt.Errorf("malformed /proc/stat: %q", line)
	}
	v := func(i int) int64 { n, _ := strconv.ParseInt(string(f[i]), 10, 64); return n }
	return v(1) + v(2) + v(3) + v(6) + v(7), v(8), nil
}
