// Command cpu-speed measures how much work a second of CPU time buys on
// each of the machine's CPUs, window by window: one thread pinned to each
// CPU runs the same loop and counts its iterations per second of its own
// CPU time. A duet holds each twin's server to the same CPU time; where
// a CPU second buys different work on different CPUs at the same moment,
// the twins' throughput ratio moves with whichever CPUs each was given,
// and no CPU accounting shows it.
//
//	go run ./bench/cpu-speed [-seconds 30] [-window 250ms] [-dir bench/cpu-speed]
//
// It writes RESULT.md: per window length, the spread of the log ratio of
// the first two CPUs' speeds, the spread of each CPU's own speed, and the
// ratio's lag-1 autocorrelation (how long a difference lasts).
package main

import (
	"context"
	"flag"
	"fmt"
	"math"
	"path/filepath"
	"runtime"
	"sync"
	"time"

	moremath "github.com/aclements/go-moremath/stats"
	"golang.org/x/sys/unix"

	"github.com/obsbench/obsbench/bench/internal/sidebyside"
)

var logf = sidebyside.Logger("cpu-speed")

func main() {
	seconds := flag.Int("seconds", 30, "how long to measure")
	window := flag.Duration("window", 250*time.Millisecond, "the shortest window; the report also sums 4 and 16 of them")
	dir := flag.String("dir", "bench/cpu-speed", "where RESULT.md goes")
	flag.Parse()
	command := sidebyside.Command("cpu-speed")
	sidebyside.Main("cpu-speed", func(ctx context.Context) error {
		if runtime.NumCPU() < 2 {
			return fmt.Errorf("%d CPU: the bench compares two", runtime.NumCPU())
		}
		n := int(time.Duration(*seconds) * time.Second / *window)
		logf("%d windows of %v on CPUs 0 and 1", n, *window)
		speeds, err := measure(ctx, 2, n, *window)
		if err != nil {
			return err
		}
		return sidebyside.Publish(filepath.Join(*dir, "RESULT.md"), report(command, *window, speeds))
	})
}

// sample is one CPU's loop iterations in a window and the CPU time its
// thread got in it, in seconds.
type sample struct{ iters, cpu float64 }

// measure runs one pinned thread per CPU for n windows and returns each
// CPU's samples, by window.
func measure(ctx context.Context, cpus, n int, window time.Duration) ([][]sample, error) {
	speeds := make([][]sample, cpus)
	errs := make([]error, cpus)
	start := time.Now().Add(100 * time.Millisecond) // windows aligned across CPUs
	var wg sync.WaitGroup
	for c := range cpus {
		wg.Add(1)
		go func() {
			defer wg.Done()
			speeds[c], errs[c] = spinOn(ctx, c, n, start, window)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return speeds, nil
}

func spinOn(ctx context.Context, cpu, n int, start time.Time, window time.Duration) ([]sample, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var set unix.CPUSet
	set.Set(cpu)
	if err := unix.SchedSetaffinity(0, &set); err != nil {
		return nil, fmt.Errorf("pin to CPU %d: %w", cpu, err)
	}
	time.Sleep(time.Until(start))
	out := make([]sample, 0, n)
	x := uint64(cpu)
	for w := range n {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		end := start.Add(time.Duration(w+1) * window)
		c0, iters := threadCPU(), 0
		for time.Now().Before(end) {
			for i := range 20000 {
				x = x*6364136223846793005 + uint64(i)
			}
			iters++
		}
		out = append(out, sample{float64(iters), threadCPU() - c0})
	}
	runtime.KeepAlive(x) // the loop's result is used, so the loop is kept
	return out, nil
}

func threadCPU() float64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return math.NaN()
	}
	return float64(ts.Sec) + float64(ts.Nsec)/1e9
}

func report(command string, window time.Duration, speeds [][]sample) string {
	w := sidebyside.NewReport("Work per CPU second, CPU by CPU", command)
	p := w.Line
	p("- one thread pinned to each of CPUs 0 and 1 runs the same loop; a window's speed is its iterations over the CPU time the thread got in it (longer windows: sums of the shortest)")
	p("- ratio: the log of CPU 0's speed over CPU 1's in the same window, in percent; a CPU's own spread is its speed's, log, in percent")
	p("")
	p("| window | windows | ratio SD %% | ratio's lag-1 autocorrelation | CPU 0 SD %% | CPU 1 SD %% | CPU 0 / CPU 1 mean %% | CPU 0, 1 time got %% |")
	p("|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, k := range []int{1, 4, 16} {
		a, b := summed(speeds[0], k), summed(speeds[1], k)
		got := [2]float64{cpuShare(speeds[0], window), cpuShare(speeds[1], window)}
		var ratio, la, lb []float64
		for i := range min(len(a), len(b)) {
			if a[i] > 0 && b[i] > 0 {
				ratio, la, lb = append(ratio, 100*math.Log(a[i]/b[i])), append(la, 100*math.Log(a[i])), append(lb, 100*math.Log(b[i]))
			}
		}
		if len(ratio) < 3 {
			continue
		}
		p("| %v | %d | %.1f | %.2f | %.1f | %.1f | %+.1f | %.0f, %.0f |", window*time.Duration(k), len(ratio), moremath.StdDev(ratio), lag1(ratio),
			moremath.StdDev(la), moremath.StdDev(lb), moremath.Mean(ratio), got[0], got[1])
	}
	return w.String()
}

// summed is the speed of each k consecutive windows together: their
// iterations over their CPU time (NaN where the thread got none).
func summed(xs []sample, k int) []float64 {
	var out []float64
	for i := 0; i+k <= len(xs); i += k {
		var it, cpu float64
		for _, x := range xs[i : i+k] {
			it, cpu = it+x.iters, cpu+x.cpu
		}
		out = append(out, it/cpu)
	}
	return out
}

// cpuShare is the share of the wall time the thread got, in percent: a
// thread that got little shared its CPU with other processes.
func cpuShare(xs []sample, window time.Duration) float64 {
	var cpu float64
	for _, x := range xs {
		cpu += x.cpu
	}
	return 100 * cpu / (float64(len(xs)) * window.Seconds())
}

func lag1(xs []float64) float64 {
	m := moremath.Mean(xs)
	var num, den float64
	for i, x := range xs {
		den += (x - m) * (x - m)
		if i > 0 {
			num += (x - m) * (xs[i-1] - m)
		}
	}
	return num / den
}
