package spec

import (
	"fmt"
	"time"
)

// The settings below take one of a few values, each a type of its own:
// flag parsing converts the flag's text once, and the code compares
// constants, never the text.

// Standby is the managed standby a primary has (--standby).
type Standby string

const (
	StandbyNone  Standby = "none"
	StandbyAsync Standby = "async"
	StandbySync  Standby = "sync"
)

// On says s asks for a standby: neither StandbyNone nor left empty (a
// spec recorded without one).
func (s Standby) On() bool { return s != "" && s != StandbyNone }

// Sync says the standby is synchronous: a commit waits for it.
func (s Standby) Sync() bool { return s == StandbySync }

// Describe says what standby s is, with the delay its relay adds each
// way; "" when there is none. A summary records it.
func (s Standby) Describe(delay time.Duration) string {
	switch {
	case !s.On():
		return ""
	case delay > 0:
		return fmt.Sprintf("%s, +%v each way", s, delay)
	}
	return string(s)
}

// OnFailure is what an experiment does after a run fails (--on-failure).
type OnFailure string

const (
	OnFailureContinue OnFailure = "continue"
	OnFailureStop     OnFailure = "stop"
)

// Stops says the experiment ends at the first failed run.
func (f OnFailure) Stops() bool { return f == OnFailureStop }

// Launcher is what starts the worker processes of --workers (--launcher).
type Launcher string

const (
	// LauncherLocal starts them on this machine; the empty Launcher is
	// the same.
	LauncherLocal Launcher = "local"
	// LauncherKubernetes starts them as an Indexed Job of worker pods.
	LauncherKubernetes Launcher = "kubernetes"
)

// Pods says the workers run in Kubernetes pods.
func (l Launcher) Pods() bool { return l == LauncherKubernetes }

// Format is how a report is printed (--format).
type Format string

const (
	FormatText      Format = "text"
	FormatMarkdown  Format = "markdown"
	FormatJSON      Format = "json"
	FormatCSV       Format = "csv"
	FormatBenchstat Format = "benchstat"
	// FormatSeries is each measured second as CSV.
	FormatSeries Format = "series"
	// FormatHTML is report.html, which 'obsbench report' writes instead
	// of printing; a run writes it beside any format (report.Formats are
	// those printed).
	FormatHTML Format = "html"
)
