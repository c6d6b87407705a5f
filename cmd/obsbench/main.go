// Command obsbench measures what watching a database costs: it runs a
// workload with and without each observer (statement logs, plan capture,
// audit, statistics extensions), interleaved and repeated, and reports the
// overhead with a confidence interval.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"syscall"

	"github.com/obsbench/obsbench/internal/analysis"
	"github.com/obsbench/obsbench/internal/spec"
)

// version is set at build time with -ldflags "-X main.version=..." (make
// build); otherwise newEnv has fromBuild read it from what the go command
// recorded. Nothing assigns it at run time.
var version = ""

// fromBuild is the version the go command recorded in the binary: the
// module's version when installed as module@version, else the commit it
// was built from (with -dirty for uncommitted changes), else "dev".
func fromBuild() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "dev"
	}
	if v := info.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	var rev, dirty string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "-dirty"
			}
		}
	}
	if rev == "" {
		return "dev"
	}
	return rev[:min(12, len(rev))] + dirty
}

// Exit codes.
const (
	exitOK      = 0
	exitFailure = 1 // the experiment could not be completed
	exitUsage   = 2 // invalid input; nothing was touched
	// exitOverhead: an observer exceeded --max-overhead; distinct from a
	// failed experiment, so that a pipeline can tell "too costly" from
	// "broken"
	exitOverhead    = 3
	exitInterrupted = 130
)

// usageError marks invalid input: exit code 2, and nothing was changed.
type usageError = spec.InvalidError

var usagef = spec.Invalidf

func main() {
	os.Exit(runMain(newEnv(os.Stdout, os.Stderr, os.Getenv)))
}

// runMain is main in the environment e (TestMain gives a test's), until
// an interrupt or SIGTERM.
func runMain(e env) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return e.run(ctx, os.Args[1:])
}

const usage = `usage: obsbench <command> [flags]

commands:
  run         measure the overhead of observers on a workload
  study       run a built-in study (obsbench study list)
  capture     turn a server's statement log into a workload file that --workload replay replays
  report      write the HTML report of a results directory, or print it as text, markdown, json, csv, benchstat, series
  inspect     list the observers active on a server now
  restore     undo what a killed obsbench left changed (from its journal)
  calibrate   check that obsbench recovers a known, synthetic overhead
  worker      run sessions for a coordinator ('obsbench run --workers N')
  observers   list the observer catalog
  completion  print a bash, zsh or fish completion script
  version     print the version

'obsbench help <command>' (or 'obsbench <command> -h') says what a command
does, with examples, and lists its flags.
`

// run is the whole CLI in the environment e.
func (e env) run(ctx context.Context, args []string) int {
	stdout, stderr := e.stdout, e.stderr
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return exitUsage
	}
	var err error
	switch args[0] {
	case "run":
		err = runCmd(ctx, args[1:], e)
	case "study":
		err = studyCmd(ctx, args[1:], e)
	case "capture":
		err = captureCmd(ctx, args[1:], stdout, stderr)
	case "report":
		err = reportCmd(args[1:], stdout, stderr)
	case "restore":
		err = restoreCmd(ctx, args[1:], stdout, stderr, e.StateDir)
	case "inspect":
		err = inspectCmd(ctx, args[1:], stdout, stderr)
	case "worker":
		err = workerCmd(ctx, args[1:], stdout, stderr, e.Getenv)
	case "calibrate":
		err = calibrateCmd(ctx, args[1:], e)
	case "observers":
		err = observersCmd(args[1:], stdout, stderr)
	case "completion":
		err = completionCmd(ctx, args[1:], e)
	case "version", "--version", "-version":
		fmt.Fprintf(stdout, "obsbench %s (%s %s/%s)\n", e.Version, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	case "help":
		if len(args) > 1 {
			return e.run(ctx, []string{args[1], "-h"})
		}
		fmt.Fprint(stdout, usage)
	case "-h", "-help", "--help":
		fmt.Fprint(stdout, usage)
	default:
		err = unknownCommand(args[0])
	}
	return exitCode(err, stderr)
}

// exitCode reports err on stderr and returns the exit code it means.
func exitCode(err error, stderr io.Writer) int {
	var ue usageError
	var oe *analysis.OverheadError
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &oe):
		fmt.Fprintf(stderr, "obsbench: %v\n", err)
		return exitOverhead
	case errors.Is(err, errHelp):
		return exitOK
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "obsbench: %v\n", err)
		return exitUsage
	case errors.Is(err, context.Canceled):
		fmt.Fprintln(stderr, "obsbench: interrupted; changes reverted, server stopped")
		return exitInterrupted
	default:
		fmt.Fprintf(stderr, "obsbench: %v\n", err)
		return exitFailure
	}
}
