package collect_test

import (
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/obsbench/obsbench/internal/collect"
)

// The window counts the CPU of a whole process tree (a shell whose child
// spins) and of this process, and nothing while both idle.
func TestSampler(t *testing.T) {
	tree := exec.Command("sh", "-c", "sh -c 'while :; do :; done' & wait")
	if err := tree.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		exec.Command("pkill", "-P", strconv.Itoa(tree.Process.Pid)).Run()
		tree.Process.Kill()
		tree.Wait()
	}()
	time.Sleep(200 * time.Millisecond) // let the child start

	w, err := collect.StartSampler(tree.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	before := rusageSelf(t)
	deadline := time.Now().Add(2100 * time.Millisecond)
	for time.Now().Before(deadline) { // spin in this process too
	}
	spun := rusageSelf(t) - before
	u, err := w.Stop()
	server, driver, noise, perSecond := u.Server, u.Driver, u.Noise, u.PerSecond
	if err != nil {
		t.Fatal(err)
	}
	// The spinning child had one core at most; on a shared machine (the
	// other packages' tests) it may get much less, but never none and
	// never more than the elapsed time.
	if server == nil || server.Seconds < 0.05 || server.Seconds > 2.4 {
		t.Errorf("server CPU = %+v; want 0.05-2.4 s for a child spinning 2.1 s", server)
	}
	// This process's CPU is what getrusage(2) saw it spend spinning,
	// however much the machine gave it, and a little more around.
	if driver.Seconds < spun.Seconds()-0.05 || driver.Seconds > spun.Seconds()+0.3 {
		t.Errorf("driver CPU = %+v; getrusage says %v of it was spent spinning", driver, spun)
	}
	if server.Pct <= 0 || server.Pct > 100 || noise.OtherPct < 0 || noise.OtherPct > 100 {
		t.Errorf("server Pct = %v, noise %+v; want (0, 100]", server.Pct, noise)
	}
	// Two whole seconds and a bit: three entries that add up to the totals.
	if len(perSecond) != 3 {
		t.Fatalf("%d per-second entries; want 3", len(perSecond))
	}
	var sum float64
	for _, s := range perSecond {
		sum += s.Server
	}
	if d := sum - server.Seconds; d > 0.011 || d < -0.011 {
		t.Errorf("per-second server CPU sums to %v; total %v", sum, server.Seconds)
	}

	// Only this process, while it sleeps: almost nothing.
	w, err = collect.StartSampler(0)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	u, err = w.Stop()
	server, driver = u.Server, u.Driver
	if err != nil || server != nil || driver.Seconds > 0.1 {
		t.Errorf("idle window = %+v, %+v, %v; want nil server and ~0 driver", server, driver, err)
	}
	if _, err := collect.StartSampler(1 << 30); err == nil {
		t.Error("StartSampler(no such pid) = nil error")
	}
}

// A thread's CPU is its own, not its process's: an idle thread of a
// process whose other thread spins has used next to none.
func TestProcessCPUOfAThread(t *testing.T) {
	// Two idle threads: one of them may be the main thread, whose id is
	// the process's, and the other is then not.
	idle := make(chan int)
	release := make(chan struct{})
	defer close(release)
	for range 2 {
		go func() {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			idle <- syscall.Gettid()
			<-release
		}()
	}
	tid := <-idle
	if other := <-idle; tid == os.Getpid() {
		tid = other
	}
	// Go threads are reused: compare what each used during the spin.
	whole0, err := collect.ProcessCPU(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	thread0, err := collect.ProcessCPU(tid)
	if err != nil {
		t.Fatal(err)
	}
	// Spin until the process has used 0.2 s of CPU (the machine is shared:
	// wall time says little), at most 10 s.
	whole := whole0
	for end := time.Now().Add(10 * time.Second); whole-whole0 < 0.2 && time.Now().Before(end); {
		for spin := time.Now().Add(20 * time.Millisecond); time.Now().Before(spin); {
		}
		whole, _ = collect.ProcessCPU(os.Getpid())
	}
	thread, _ := collect.ProcessCPU(tid)
	if whole-whole0 < 0.2 || thread-thread0 > 0.05 {
		t.Errorf("during the spin the process used %.2fs, its idle thread %.2fs; want >= 0.2s and <= 0.05s", whole-whole0, thread-thread0)
	}
}

// rusageSelf is this process's user and system CPU, from getrusage(2):
// the sampler's figure checked against the kernel's other account.
func rusageSelf(t *testing.T) time.Duration {
	t.Helper()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
