package main

import (
	"io"

	"github.com/obsbench/obsbench/internal/app"
	"github.com/obsbench/obsbench/internal/journal"
	"github.com/obsbench/obsbench/internal/process"
)

// env is what obsbench takes from the process it runs in, read once by
// main (tests make their own): each command is given it and passes on
// only what its parts need.
type env struct {
	stdout, stderr io.Writer
	process.Env
	// countUnasked is whether a run that is not given --count counts as
	// the spec it starts from says (on, for 'obsbench run'); tests count
	// only where they ask.
	countUnasked bool
}

// newEnv is the environment of a process writing to stdout and stderr
// whose variables getenv reads.
func newEnv(stdout, stderr io.Writer, getenv func(string) string) env {
	v := version
	if v == "" {
		v = fromBuild()
	}
	return env{stdout: stdout, stderr: stderr, countUnasked: true,
		Env: process.Env{Version: v, StateDir: journal.Dir(getenv), Getenv: getenv}}
}

// output is where a command of the experiment runner prints, with the
// environment it runs in; command is the command line for the record.
func (e env) output(command []string) app.Output {
	return app.Output{Stdout: e.stdout, Stderr: e.stderr, Command: command, Env: e.Env}
}
