package spec

import (
	"maps"
	"net"
	"strings"
	"time"

	"github.com/obsbench/obsbench/internal/result"
)

// Chosen names the settings of a spec that were chosen (by the flag of
// the same name, a study, or an experiment's record) rather than left at
// their defaults: defaults that depend on the workload apply only to the
// others, and a chosen setting that nothing in the experiment uses is
// refused or warned about. It is not recorded: a recorded spec is
// complete, every setting in it chosen.
type Chosen map[string]bool

// IsChosen says whether the setting of flag name was chosen.
func (s Spec) IsChosen(name string) bool { return s.Chosen[name] }

// Choose marks the settings of these flags chosen. Specs are copied by
// value, so the set is copied before it changes: a copy's choices never
// reach the spec it was copied from.
func (s *Spec) Choose(names ...string) {
	c := maps.Clone(s.Chosen)
	if c == nil {
		c = Chosen{}
	}
	for _, n := range names {
		c[n] = true
	}
	s.Chosen = c
}

// Unchoose leaves the settings of these flags to their defaults again.
func (s *Spec) Unchoose(names ...string) {
	c := maps.Clone(s.Chosen)
	for _, n := range names {
		delete(c, n)
	}
	s.Chosen = c
}

// Validate refuses a spec whose settings are out of their ranges or
// contradict each other, naming the setting as its flag and what would
// be valid. It checks what the spec alone can tell; which engines,
// workloads, observers and formats exist is the registries' to say.
func (s Spec) Validate() error {
	for _, check := range []func() error{s.validateWaits, s.validateTimes, s.validateAlternation, s.validateStandby,
		s.validateSessions, s.validateCount, s.validateWorkers, s.validateRate, s.validateDose} {
		if err := check(); err != nil {
			return err
		}
	}
	return nil
}

func (s Spec) validateWaits() error {
	switch {
	case s.MeasureCollectors && s.Waits == 0:
		return Invalidf("--measure-collectors measures the wait sampler: give --waits an interval, not off")
	case s.IsChosen("kernel-waits") && s.Waits == 0:
		return Invalidf("--kernel-waits is the wait sampler's: give --waits an interval, not off")
	case s.Waits != 0 && (s.Waits < time.Millisecond || s.Waits > 10*time.Second):
		return Invalidf("--waits %v: want an interval from 1ms to 10s (e.g. 10ms), or off", s.Waits)
	}
	return nil
}

func (s Spec) validateTimes() error {
	switch {
	case s.Warmup < 0 || s.Warmup > time.Hour:
		return Invalidf("--warmup %v: want 0s to 1h", s.Warmup)
	case s.Rounds < 2 || s.Rounds > 1000:
		return Invalidf("--rounds %d: want 2 to 1000 (one run is one sample; comparisons need several)", s.Rounds)
	case s.Duration < time.Second || s.Duration > 24*time.Hour:
		return Invalidf("--duration %v: want 1s to 24h", s.Duration)
	case s.Wide && s.Format != FormatText:
		return Invalidf("-v widens the text table; --format %s has every column already", s.Format)
	case s.MaxOverhead != nil && (*s.MaxOverhead < 0 || *s.MaxOverhead > 100):
		return Invalidf("--max-overhead %g: want a percentage from 0 to 100", *s.MaxOverhead)
	case s.MaxCountedOverhead != nil && (*s.MaxCountedOverhead < 0 || *s.MaxCountedOverhead > 100):
		return Invalidf("--max-counted-overhead %g: want a percentage from 0 to 100", *s.MaxCountedOverhead)
	case s.OnFailure != OnFailureContinue && s.OnFailure != OnFailureStop:
		return Invalidf("--on-failure %q: want continue or stop", s.OnFailure)
	case s.Method != "" && !s.Method.Valid(): // "": the run chooses
		return Invalidf("--method %q: want %s", s.Method, OneOf(result.Methods))
	}
	return nil
}

func (s Spec) validateAlternation() error {
	a := s.Alternation
	switch {
	case a.PhaseMin < 2 || a.PhaseMax < a.PhaseMin || a.PhaseMax > 600:
		return Invalidf("--phase-min %d --phase-max %d: want 2 <= min <= max <= 600 seconds", a.PhaseMin, a.PhaseMax)
	case a.Duration < time.Duration(5*a.PhaseMin)*time.Second || a.Duration > 24*time.Hour:
		return Invalidf("--alt-duration %v: want at least 5 phases (%ds) and at most 24h", a.Duration, 5*a.PhaseMin)
	case s.TargetResolution < 0 || s.TargetResolution > 50:
		return Invalidf("--target-resolution %g: want a percentage above 0 and at most 50", s.TargetResolution)
	case s.MaxTime < time.Minute || s.MaxTime > 7*24*time.Hour:
		return Invalidf("--max-time %v: want 1m to 168h", s.MaxTime)
	case a.Reps < 1 || a.Reps > 1000:
		return Invalidf("--alt-rounds %d: want 1 to 1000", a.Reps)
	case s.DriverThreads < 1 || s.DriverThreads > 256:
		return Invalidf("--driver-threads %d: want 1 to 256", s.DriverThreads)
	}
	return nil
}

// ValidateDuet refuses what --method duet cannot do, and its flags
// without it, on a machine of cpus CPUs. It is apart from Validate: the
// method may be chosen after the spec is read (a duet where one can run).
func (s Spec) ValidateDuet(cpus int) error {
	if s.Method == result.MethodSplit {
		return s.validateSplit()
	}
	if !s.Method.Twins() {
		switch {
		case s.TwinDSN != "":
			return Invalidf("--twin-dsn is the second server of --method duet")
		case s.IsChosen("twin-cpus"):
			return Invalidf("--twin-cpus is each twin's CPU quota in --method duet")
		}
		return nil
	}
	switch {
	case s.Method == result.MethodSplitDuet && s.IsChosen("clients") && (s.Clients < 2 || s.Clients%2 != 0):
		return Invalidf("--clients %d with --method split,duet: the split's sessions make two equal groups; want an even number, at least 2", s.Clients)
	case s.TwinCPUs < 0 || s.TwinCPUs > float64(cpus)/2:
		return Invalidf("--twin-cpus %g: want more than 0 and at most half of this machine's CPUs, or 0 for %.0f%% of them each", s.TwinCPUs, 100*DefaultTwinShare)
	case s.DSN != "" && s.TwinDSN == "":
		return Invalidf("--method duet on an external server (--dsn) needs its twin: give --twin-dsn, a second server with the same dataset")
	case s.DSN == "" && s.TwinDSN != "":
		return Invalidf("--twin-dsn is the twin of --dsn: give both, or neither for two managed twins")
	case s.DSN != "" && s.TwinDSN == s.DSN:
		return Invalidf("--twin-dsn names the same server as --dsn: a duet needs two distinct servers")
	case s.Rounds%2 != 0:
		return Invalidf("--rounds %d: a duet takes its phases in pairs, the observer once in each twin: want an even number", s.Rounds)
	case s.Workers > 0:
		return Invalidf("--workers: --method duet drives each twin from a worker process of its own; not with --workers")
	case s.Standby.On():
		return Invalidf("--standby with --method duet: twins with standbys are not supported yet; use --method auto")
	case s.Replay.Passes > 0:
		return Invalidf("--replay-passes with --method duet: a duet does not replay a capture yet; use --method auto")
	}
	return nil
}

// validateSplit refuses what --method split cannot do: its two groups
// share --clients, one server's sessions, driven from a worker process
// each.
func (s Spec) validateSplit() error {
	switch {
	case s.TwinDSN != "":
		return Invalidf("--twin-dsn with --method split: a split needs one server, its sessions in two groups; --method duet compares two servers")
	case s.IsChosen("twin-cpus"):
		return Invalidf("--twin-cpus is each twin's CPU quota in --method duet; --method split holds no quota")
	case s.IsChosen("clients") && (s.Clients < 2 || s.Clients%2 != 0):
		return Invalidf("--clients %d with --method split: the sessions make two equal groups; want an even number, at least 2", s.Clients)
	case s.Rounds%2 != 0:
		return Invalidf("--rounds %d: a split takes its phases in pairs, the observer once in each group: want an even number", s.Rounds)
	case s.Workers > 0:
		return Invalidf("--workers: --method split drives each group from a worker process of its own; not with --workers")
	case s.Standby.On():
		return Invalidf("--standby with --method split is not supported yet; use --method auto")
	case s.Replay.Passes > 0:
		return Invalidf("--replay-passes with --method split: a split does not replay a capture; use --method auto")
	}
	return nil
}

func (s Spec) validateStandby() error {
	switch {
	case s.Standby != StandbyNone && s.Standby != StandbyAsync && s.Standby != StandbySync:
		return Invalidf("--standby %q: want none, async or sync", s.Standby)
	case s.Standby != StandbyNone && s.DSN != "":
		return Invalidf("--standby starts a standby of obsbench's managed server: not with --dsn")
	case s.StandbyDelay != 0 && s.Standby == StandbyNone:
		return Invalidf("--standby-delay needs --standby async or sync")
	case s.StandbyDelay < 0 || s.StandbyDelay > time.Second:
		return Invalidf("--standby-delay %v: want 0 to 1s", s.StandbyDelay)
	}
	return nil
}

func (s Spec) validateSessions() error {
	switch {
	case len(s.Sessions) > 0 && s.IsChosen("clients"):
		return Invalidf("--sessions %s sweeps the session count: give it or --clients, not both", FormatSessions(s.Sessions))
	case len(s.Sessions) > 0 && s.Format != FormatText && s.Format != FormatJSON:
		return Invalidf("--sessions prints the sweep as text or json, not %s (each session count's directory has its own summary.json)", s.Format)
	case s.IsChosen("clients") && (s.Clients < 1 || s.Clients > 1000):
		return Invalidf("--clients %d: want 1 to 1000", s.Clients)
	}
	return nil
}

// MaxRate bounds --rate: arrivals a second over all sessions.
const MaxRate = 10_000_000

func (s Spec) validateRate() error {
	switch {
	case s.Rate < 0 || s.Rate > MaxRate || (s.IsChosen("rate") && s.Rate == 0):
		return Invalidf("--rate %g: want arrivals per second over all sessions, above 0 and at most %d", s.Rate, MaxRate)
	case s.MaxLatencyAdded != nil && (*s.MaxLatencyAdded < 0 || *s.MaxLatencyAdded > 60_000):
		return Invalidf("--max-latency-added %g: want milliseconds from 0 to 60000", *s.MaxLatencyAdded)
	case s.LoadPct < 0 || s.LoadPct > 100 || (s.IsChosen("load") && s.LoadPct == 0 && len(s.Loads) == 0):
		return Invalidf("--load %g: want a percentage of the probed capacity, above 0 and at most 100", s.LoadPct)
	case len(s.Loads) > 0 && (s.Rate > 0 || s.LoadPct > 0):
		return Invalidf("--load %s sweeps the load: not with --rate", FormatLoads(s.Loads))
	case len(s.Loads) > 0 && s.Format != FormatText && s.Format != FormatJSON:
		return Invalidf("--load %s prints the sweep as text or json, not %s (each load's directory has its own summary.json)", FormatLoads(s.Loads), s.Format)
	case len(s.Loads) > 0 && (s.MaxLatencyAdded != nil || s.MaxOverhead != nil):
		return Invalidf("--max-latency-added and --max-overhead gate one experiment: give one --load, not a sweep")
	case s.LoadPct > 0 && s.Rate > 0:
		return Invalidf("--load and --rate both set the arrival rate: give one")
	case s.ClosedLoop && (s.Rate > 0 || s.LoadPct > 0 || len(s.Loads) > 0):
		return Invalidf("--closed-loop with %s: a closed loop has no arrival rate; give one of them", s.rateFlag())
	case s.LatencyLimit < 0 || s.LatencyLimit > time.Hour:
		return Invalidf("--latency-limit %v: want above 0 and at most 1h", s.LatencyLimit)
	case (s.Rate > 0 || s.LoadPct > 0 || len(s.Loads) > 0) && s.Workload == "replay":
		return Invalidf("%s with --workload replay: a replay keeps the capture's own timing (--replay-speed)", s.rateFlag())
	case (s.Rate > 0 || s.LoadPct > 0 || len(s.Loads) > 0) && len(s.Sessions) > 0 && s.Study != "":
		return Invalidf("%s: study %s sweeps the session count (--sessions %s), which a fixed rate does not support yet", s.rateFlag(), s.Study, FormatSessions(s.Sessions))
	case (s.Rate > 0 || s.LoadPct > 0 || len(s.Loads) > 0) && len(s.Sessions) > 0:
		return Invalidf("%s with --sessions: a sweep of sessions at a fixed rate is not supported yet; give --clients", s.rateFlag())
	}
	return nil
}

// ValidateOpenFlags refuses the flags of a fixed arrival rate on a run
// that has none: it is called once the method is chosen, since a duet
// that OpensByDefault runs at DefaultDuetLoad though no rate was asked.
func (s Spec) ValidateOpenFlags() error {
	if s.Rate > 0 || s.LoadPct > 0 || len(s.Loads) > 0 {
		return nil
	}
	closed := "give --rate or --load too"
	if s.Method == result.MethodDuet && s.ClosedLoop {
		closed = "this duet is a closed loop (--closed-loop); drop it, or give --rate or --load"
	} else if s.Method == result.MethodDuet {
		closed = "this duet is a closed loop (" + s.closedBy() + "); give --rate or --load"
	}
	switch {
	case s.MaxLatencyAdded != nil:
		return Invalidf("--max-latency-added gates the p99 latency an observer adds at a fixed rate: %s", closed)
	case s.LatencyLimit != 0:
		return Invalidf("--latency-limit counts units late against their schedule: %s", closed)
	}
	return nil
}

// closedBy names what keeps a duet with no rate asked for in a closed
// loop, as OpensByDefault decides it.
func (s Spec) closedBy() string {
	switch {
	case s.Study != "":
		return "study " + s.Study + " keeps its own closed loop"
	case s.DSN != "":
		return "twins by --dsn"
	case len(s.Sessions) > 0:
		return "a sweep of --sessions"
	case s.Workload == "replay":
		return "a replay"
	}
	return "a workload of fixed work"
}

// rateFlag is the flag that set the rate: --rate or --load.
func (s Spec) rateFlag() string {
	if s.LoadPct > 0 || len(s.Loads) > 0 {
		return "--load"
	}
	return "--rate"
}

// TimingFlags are the settings of timed runs, which a counted experiment
// (--method instructions) does not have.
var TimingFlags = []string{"duration", "warmup", "alt-duration", "alt-rounds", "phase-min", "phase-max",
	"target-resolution", "max-time", "clients", "sessions", "driver-threads", "waits", "measure-collectors", "rate", "latency-limit", "load", "closed-loop"}

// MaxCountSessions bounds --count-sessions: each session's backend runs
// under valgrind, tens of times slower and larger than it would.
const MaxCountSessions = 16

func (s Spec) validateCount() error {
	counted := s.Count.After && !s.Method.Counted()
	if !s.Method.Counted() && !counted {
		return nil
	}
	n, w := s.Count.Statements, s.Count.Warmup
	switch {
	case counted && (s.Count.Rounds < 1 || s.Count.Rounds > 100):
		return Invalidf("--count-rounds %d: want 1 to 100 (2 or more for an interval)", s.Count.Rounds)
	case n < 10 || n > 1_000_000:
		return Invalidf("--count-statements %d: want 10 to 1000000", n)
	case w < 0 || w > 1_000_000:
		return Invalidf("--count-warmup %d: want 0 to 1000000", w)
	case !(s.Count.Width >= 0 && s.Count.Width <= 100):
		return Invalidf("--count-width %v: want 0 (off) to 100 points", s.Count.Width)
	case s.Count.Shrink < 0 || s.Count.Shrink > 100 || (s.Count.Shrink == 0 && s.IsChosen("count-shrink")):
		return Invalidf("--count-shrink %d: want 1 to 100", s.Count.Shrink)
	case s.Count.Sessions < 0 || s.Count.Sessions > MaxCountSessions || (s.Count.Sessions == 0 && s.IsChosen("count-sessions")):
		return Invalidf("--count-sessions %d: want 1 to %d", s.Count.Sessions, MaxCountSessions)
	}
	return nil
}

// KubernetesFlags are the flags of --launcher kubernetes alone.
var KubernetesFlags = []string{"image", "namespace", "kubeconfig", "worker-cpu", "worker-memory"}

func (s Spec) validateWorkers() error {
	if s.Workers < 0 || s.Workers > 64 {
		return Invalidf("--workers %d: want 1 to 64 worker processes, or 0 to run the sessions in this process", s.Workers)
	}
	if s.Workers == 0 {
		return nil // the workers' flags without workers are the caller's to refuse
	}
	co := s.Coordinator
	switch {
	case s.Launcher != "" && s.Launcher != LauncherLocal && s.Launcher != LauncherKubernetes:
		return Invalidf("--launcher %s: want local (worker processes on this machine) or kubernetes (an Indexed Job of worker pods)", s.Launcher)
	case co.Advertise != "" && net.ParseIP(co.Advertise) == nil:
		return Invalidf("--advertise %s: want an IP address of this machine that the workers reach", co.Advertise)
	case co.Port < 0 || co.Port > 65535:
		return Invalidf("--coordinator-port %d: want 1 to 65535, or 0 for the default", co.Port)
	case co.Port != 0 && co.Advertise == "" && !s.Launcher.Pods():
		return Invalidf("--coordinator-port: local workers reach this obsbench over a Unix socket unless --advertise gives an address to listen on")
	}
	if !s.Launcher.Pods() {
		for _, f := range KubernetesFlags {
			if s.IsChosen(f) {
				return Invalidf("--%s is for --launcher kubernetes", f)
			}
		}
	}
	switch {
	case s.Launcher.Pods() && len(s.WorkerPrefix) > 0:
		return Invalidf("--worker-prefix is for --launcher local: a pod's command is its image's")
	case s.Launcher.Pods() && s.Kubernetes.Image == "":
		return Invalidf("--launcher kubernetes: give --image, an image with obsbench in it (deploy/Dockerfile builds one)")
	case s.Launcher.Pods() && s.DSN == "":
		return Invalidf("--launcher kubernetes: the workers run in pods and reach the server over the network; a managed server listens on this machine's loopback only: give --dsn of a server the pods can reach")
	case s.Method.Counted():
		return Invalidf("--workers spreads sessions over processes or pods; --method instructions runs its sessions (--count-sessions) from obsbench itself, against one server under valgrind")
	}
	for _, w := range s.WorkerPrefix {
		if strings.ContainsAny(w, "'\"") {
			return Invalidf("--worker-prefix: %s: the prefix is split at spaces and not unquoted; put a command that needs quoting in a script and give its path", w)
		}
	}
	return nil
}
