package collect

import (
	"context"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// fakeSource reports two sessions: one waiting on a lock, one on CPU.
type fakeSource struct{ calls atomic.Int64 }

func (f *fakeSource) ActiveWaits(context.Context) ([]SessionWait, error) {
	f.calls.Add(1)
	return []SessionWait{{Wait: "Lock:tuple"}, {}}, nil
}

// Samples go to the profile of the observer's current state, and a paused
// sampler takes none.
func TestWaitSamplerFilesSamplesByPhase(t *testing.T) {
	src := &fakeSource{}
	s := NewWaitSampler(src, time.Millisecond, false)
	// Each state waits for ticks of its own rather than for a time: on a
	// busy machine the sampler's goroutine may not run for a while.
	ticks := func(n int64) {
		t.Helper()
		want := src.calls.Load() + n
		for deadline := time.Now().Add(10 * time.Second); src.calls.Load() < want; time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("the sampler took %d samples in 10 s; want %d", src.calls.Load(), want)
			}
		}
	}
	s.SetObserverOn(false)
	s.Start(context.Background())
	ticks(3)
	s.SetObserverOn(true)
	ticks(3)
	s.Pause(true)
	time.Sleep(20 * time.Millisecond)
	paused := src.calls.Load()
	time.Sleep(30 * time.Millisecond)
	on, off, err := s.Stop()
	if err != nil {
		t.Fatal(err)
	}
	if src.calls.Load() != paused {
		t.Errorf("sampled %d times while paused", src.calls.Load()-paused)
	}
	for name, w := range map[string]Waits{"on": on, "off": off} {
		if w.Ticks == 0 || w.Counts["Lock:tuple"] != w.Ticks || w.Counts[CPULabel] != w.Ticks || w.Total() != 2*w.Ticks {
			t.Errorf("%s profile %+v; want one lock and one CPU sample per tick", name, w)
		}
	}
	if on.Ticks+off.Ticks != src.calls.Load() {
		t.Errorf("%d+%d ticks for %d samples", on.Ticks, off.Ticks, src.calls.Load())
	}
}

// A session blocked in the kernel while PostgreSQL calls it running is
// named by its wait channel.
func TestKernelWaitNamesASleepingProcess(t *testing.T) {
	// A process that does nothing but sleep is blocked in the kernel.
	p, err := os.StartProcess("/bin/sleep", []string{"sleep", "5"}, &os.ProcAttr{})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Kill()
	time.Sleep(200 * time.Millisecond)
	if w := KernelWait(p.Pid); w == "" || strings.HasPrefix(w, "syscall:") {
		t.Fatalf("KernelWait of a sleeping process = %q, want its wait channel", w)
	}
}

// sleeperSource reports one session: a sleeping process, which the
// engine may call a wait for the client.
type sleeperSource struct {
	pid  int
	idle bool
}

func (s sleeperSource) ActiveWaits(context.Context) ([]SessionWait, error) {
	return []SessionWait{{PID: s.pid}}, nil
}

func (s sleeperSource) IdleKernelWait(string) bool { return s.idle }

// A session whose kernel wait the engine calls a wait for its client is
// not counted; otherwise it shows as that wait.
func TestIdleKernelWaitsAreNotCounted(t *testing.T) {
	p, err := os.StartProcess("/bin/sleep", []string{"sleep", "5"}, &os.ProcAttr{})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Kill()
	time.Sleep(200 * time.Millisecond)
	for _, idle := range []bool{true, false} {
		ws := NewWaitSampler(sleeperSource{pid: p.Pid, idle: idle}, 5*time.Millisecond, true)
		ws.Start(context.Background())
		time.Sleep(100 * time.Millisecond)
		on, _, err := ws.Stop()
		if err != nil {
			t.Fatal(err)
		}
		if idle && on.Total() != 0 {
			t.Errorf("idle sessions counted: %v", on.Counts)
		}
		if !idle && (on.Ticks == 0 || on.Total() != on.Ticks) {
			t.Errorf("%d ticks, samples %v; want one OS wait per tick", on.Ticks, on.Counts)
		}
	}
}
