package sidebyside

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/signal"
	"runtime"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

// Seed is seed, or one drawn from the clock when it is 0 (not given).
func Seed(seed uint64) uint64 {
	if seed == 0 {
		return uint64(time.Now().UnixNano())
	}
	return seed
}

// Command is how the bench was run, as its report names it.
func Command(bench string) string {
	return strings.Join(append([]string{"go run ./bench/" + bench}, os.Args[1:]...), " ")
}

// Main runs a bench's run under a context that Ctrl-C and SIGTERM
// cancel, so that it stops what it started; an error is printed after
// the bench's name and the process exits 1.
func Main(bench string, run func(ctx context.Context) error) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx)
	stop()
	if err != nil {
		Fail(bench, err)
	}
}

// Logger is a bench's logf: a line on standard error after the bench's
// name, for progress that the report does not keep.
func Logger(bench string) func(format string, args ...any) {
	return func(format string, args ...any) {
		fmt.Fprintf(os.Stderr, bench+": "+format+"\n", args...)
	}
}

// Fail prints err after the bench's name and exits 1.
func Fail(bench string, err error) {
	fmt.Fprintln(os.Stderr, bench+":", err)
	os.Exit(1)
}

// Neighbour keeps one core busy until ctx ends: a steady neighbour, such
// as another tenant's job, that takes from whichever twin the scheduler
// puts beside it.
func Neighbour(ctx context.Context) {
	runtime.LockOSThread()
	for ctx.Err() == nil {
		for i := 0; i < 100000; i++ {
			_ = i * i
		}
	}
}

// Drift keeps one core busy for a random 3-12 s, then leaves it idle for
// 3-12 s, until ctx ends: a machine whose speed for everything else
// changes faster than alternation's phases and rounds' runs. busy adds
// up the milliseconds it was busy.
func Drift(ctx context.Context, seed uint64, busy *atomic.Int64) {
	runtime.LockOSThread()
	rng := rand.New(rand.NewPCG(seed, 77))
	for ctx.Err() == nil {
		on := time.Duration(3000+rng.IntN(9000)) * time.Millisecond
		end := time.Now().Add(on)
		for time.Now().Before(end) && ctx.Err() == nil {
			for i := 0; i < 100000; i++ {
				_ = i * i
			}
		}
		busy.Add(on.Milliseconds())
		select {
		case <-ctx.Done():
		case <-time.After(time.Duration(3000+rng.IntN(9000)) * time.Millisecond):
		}
	}
}
