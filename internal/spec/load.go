package spec

import "github.com/obsbench/obsbench/internal/result"

// DefaultDuetLoad is the load a duet runs at unless a rate, a load or
// --closed-loop is given: the rate at which the baseline keeps half of
// its twin's CPU quota busy. Below the quota a twin's server is not
// throttled, so its CPU per statement does not depend on which twin the
// scheduler favoured in a second, as throughput at the quota does; the
// same phases resolve a cost about four times as narrowly
// (bench/accuracy/README.md, "At half load"). The figure is then the
// server CPU an observer adds to a statement, as a share of the server's
// CPU per statement with it: the throughput a CPU-bound server whose
// clients run elsewhere would lose.
const DefaultDuetLoad = 50

// DefaultLoadNote says why a duet runs at a rate no one asked for.
const DefaultLoadNote = "at half load by default (--load 50): each twin's server below its CPU quota, the overhead read from its CPU per statement, latency from each unit's scheduled start; --closed-loop for the throughput lost at saturation, as fast as the server answers"

// AtDefaultLoad says whether s, its method chosen, runs at
// DefaultDuetLoad: a duet with no closed loop asked for and one
// OpensByDefault.
func (s Spec) AtDefaultLoad(fixedWork bool) bool {
	return !s.ClosedLoop && s.OpensByDefault(fixedWork)
}

// OpensByDefault says whether s, its method chosen, is a duet that runs
// at DefaultDuetLoad unless --closed-loop is given: no rate or load
// asked for, and nothing a rate cannot run with (a sweep of sessions, a
// replay, fixed work). A study keeps its own closed loop, as the study
// it reproduces ran; twins reached by --dsn, whose CPU a rate's figure
// needs but a server elsewhere does not give, keep one too.
func (s Spec) OpensByDefault(fixedWork bool) bool {
	return s.Method == result.MethodDuet && s.Rate == 0 && s.LoadPct == 0 && len(s.Loads) == 0 &&
		len(s.Sessions) == 0 && s.Workload != "replay" && !fixedWork && s.Study == "" && s.DSN == ""
}
