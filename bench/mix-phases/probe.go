package main

import (
	"runtime"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// probeSample is one pass of the speed probe: when it ended, and the CPU
// time its thread spent on each of its two loops.
type probeSample struct {
	at              time.Time
	compute, memory int64
	check           uint64 // the loops' result, kept so that they are not optimised away
}

// speedProbe runs two fixed pieces of work every 20 ms on a thread of its
// own and keeps the CPU time each took: a chain of multiplications (the
// core's speed) and a walk through a 64 MiB random cycle (the memory's
// latency). If the machine's speed for the server's work changed from
// phase to phase, these would change with it. About 350 µs per 20 ms: 1.75%
// of one core, in every phase alike.
type speedProbe struct {
	mu      sync.Mutex
	samples []probeSample
	stop    chan struct{}
	done    chan struct{}
}

func startProbe() *speedProbe {
	p := &speedProbe{stop: make(chan struct{}), done: make(chan struct{})}
	go p.run()
	return p
}

func threadCPU() int64 {
	var ts unix.Timespec
	unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts)
	return ts.Nano()
}

func (p *speedProbe) run() {
	runtime.LockOSThread()
	defer close(p.done)
	// One cycle through 8 Mi slots in random order (Sattolo's shuffle):
	// each step a likely cache and TLB miss.
	cycle := make([]uint32, 1<<23)
	for i := range cycle {
		cycle[i] = uint32(i)
	}
	x := uint64(88172645463325252)
	for i := len(cycle) - 1; i > 0; i-- {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		k := x % uint64(i)
		cycle[i], cycle[k] = cycle[k], cycle[i]
	}
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-p.stop:
			return
		case <-tick.C:
		}
		t0 := threadCPU()
		v := uint64(1)
		for range 100_000 {
			v = v*6364136223846793005 + 1442695040888963407
			v ^= v >> 17
		}
		t1 := threadCPU()
		j := uint32(0)
		for range 500 {
			j = cycle[j]
		}
		t2 := threadCPU()
		p.mu.Lock()
		p.samples = append(p.samples, probeSample{at: time.Now(), compute: t1 - t0, memory: t2 - t1, check: v + uint64(j)})
		p.mu.Unlock()
	}
}

// close stops the probe and returns its samples.
func (p *speedProbe) close() []probeSample {
	close(p.stop)
	<-p.done
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.samples
}
