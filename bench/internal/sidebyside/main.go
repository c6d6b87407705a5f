package sidebyside

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"strings"
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
