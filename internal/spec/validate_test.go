package spec

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/obsbench/obsbench/internal/result"
)

// valid is a spec Validate accepts: the default experiment's settings.
func valid() Spec {
	return Spec{
		Engine: "postgres", Standby: "none", Workload: "credit-top1", Method: "auto",
		Rounds: 6, Duration: 8 * time.Second, Warmup: 2 * time.Second,
		Alternation: Alternation{Duration: time.Minute, PhaseMin: 2, PhaseMax: 4, Reps: 1},
		Count:       Count{Statements: 1000, Warmup: 100},
		MaxTime:     30 * time.Minute, DriverThreads: 4, OnFailure: "continue", Format: "text",
	}
}

// checkInvalid checks err, what validating s gave: none for flag "", or
// an InvalidError naming flag.
func checkInvalid(t *testing.T, s Spec, err error, flag string) {
	t.Helper()
	var inv InvalidError
	switch {
	case flag == "" && err != nil:
		t.Errorf("%+v: %v; want it valid", s, err)
	case flag != "" && (err == nil || !strings.Contains(err.Error(), flag)):
		t.Errorf("want an error naming %q; got %v", flag, err)
	case err != nil && !errors.As(err, &inv):
		t.Errorf("%v is not an InvalidError", err)
	}
}

// Each setting out of its range, or contradicting another, is refused
// with its flag named; the same values within range are not.
func TestValidate(t *testing.T) {
	if err := valid().Validate(); err != nil {
		t.Fatalf("the default experiment: %v", err)
	}
	big := 101.0
	for _, tt := range []struct {
		edit func(*Spec)
		flag string // in the error; "" for none
	}{
		{func(s *Spec) { s.Waits = time.Microsecond }, "--waits 1µs"},
		{func(s *Spec) { s.Waits = 10 * time.Millisecond }, ""},
		{func(s *Spec) { s.MeasureCollectors = true }, "--measure-collectors"},
		{func(s *Spec) { s.Choose("kernel-waits") }, "--kernel-waits"},
		{func(s *Spec) { s.Warmup = -time.Second }, "--warmup"},
		{func(s *Spec) { s.Rounds = 1 }, "--rounds 1"},
		{func(s *Spec) { s.Duration = time.Millisecond }, "--duration"},
		{func(s *Spec) { s.Wide, s.Format = true, "csv" }, "-v widens"},
		{func(s *Spec) { s.Wide = true }, ""},
		{func(s *Spec) { s.MaxOverhead = &big }, "--max-overhead 101"},
		{func(s *Spec) { s.OnFailure = "retry" }, "--on-failure"},
		{func(s *Spec) { s.Method = "" }, ""}, // the run chooses
		{func(s *Spec) { s.Method = "fast" }, `--method "fast": want auto, alternation, rounds, instructions, duet, split or split,duet`},
		{func(s *Spec) { s.Alternation.PhaseMax = 1 }, "--phase-min 2 --phase-max 1"},
		{func(s *Spec) { s.Alternation.Duration = 9 * time.Second }, "--alt-duration"},
		{func(s *Spec) { s.TargetResolution = 60 }, "--target-resolution"},
		{func(s *Spec) { s.MaxTime = time.Second }, "--max-time"},
		{func(s *Spec) { s.Alternation.Reps = 0 }, "--alt-rounds"},
		{func(s *Spec) { s.DriverThreads = 0 }, "--driver-threads"},
		{func(s *Spec) { s.Standby = "hot" }, "--standby"},
		{func(s *Spec) { s.Standby, s.DSN = "sync", "postgres://x" }, "not with --dsn"},
		{func(s *Spec) { s.StandbyDelay = time.Millisecond }, "--standby-delay needs"},
		{func(s *Spec) { s.Standby, s.StandbyDelay = "sync", 2*time.Second }, "--standby-delay 2s"},
		{func(s *Spec) { s.Sessions = []int{1, 2}; s.Choose("clients") }, "--sessions 1,2"},
		{func(s *Spec) { s.Sessions, s.Format = []int{1, 2}, "csv" }, "--sessions prints"},
		{func(s *Spec) { s.Clients = 0; s.Choose("clients") }, "--clients 0"},
		{func(s *Spec) { s.Clients = 0 }, ""},          // not chosen: the workload's default
		{func(s *Spec) { s.Count.Statements = 5 }, ""}, // not counting
		{func(s *Spec) { s.Method, s.Count.Statements = "instructions", 5 }, "--count-statements 5"},
		{func(s *Spec) { s.Method, s.Count.Warmup = "instructions", -1 }, "--count-warmup"},
		{func(s *Spec) { s.Count.After, s.Count.Rounds = true, 0 }, "--count-rounds 0"},
		{func(s *Spec) { s.Count.After, s.Count.Rounds, s.Count.Statements = true, 2, 5 }, "--count-statements 5"},
		{func(s *Spec) { s.Count.After, s.Count.Rounds = true, 2 }, ""},
		{func(s *Spec) { s.Method, s.Count.Rounds = "instructions", 0 }, ""}, // --rounds counts there
		{func(s *Spec) { s.Workers = 65 }, "--workers 65"},
		{func(s *Spec) { s.Coordinator.Advertise = "nowhere" }, ""}, // no workers: the caller's to refuse
		{func(s *Spec) { s.Workers, s.Coordinator.Advertise = 2, "nowhere" }, "--advertise nowhere"},
		{func(s *Spec) { s.Workers, s.Launcher = 2, "ssh" }, "--launcher ssh"},
		{func(s *Spec) { s.Workers, s.Coordinator.Port = 2, 70000 }, "--coordinator-port 70000"},
		{func(s *Spec) { s.Workers, s.Coordinator.Port = 2, 7400 }, "--coordinator-port: local workers"},
		{func(s *Spec) { s.Workers, s.WorkerPrefix = 2, []string{"'nice"} }, "--worker-prefix"},
		{func(s *Spec) { s.Workers = 2; s.Choose("image") }, "--image is for --launcher kubernetes"},
		{func(s *Spec) { s.Workers, s.Launcher, s.DSN = 2, "kubernetes", "host=db" }, "--launcher kubernetes: give --image"},
		{func(s *Spec) { s.Workers, s.Launcher, s.Kubernetes.Image = 2, "kubernetes", "obsbench" }, "give --dsn"},
		{func(s *Spec) {
			s.Workers, s.Launcher, s.Kubernetes.Image, s.DSN, s.WorkerPrefix = 2, "kubernetes", "obsbench", "host=db", []string{"nice"}
		}, "--worker-prefix is for --launcher local"},
		{func(s *Spec) {
			s.Workers, s.Launcher, s.Kubernetes.Image, s.DSN = 2, "kubernetes", "obsbench", "host=db"
		}, ""},
		{func(s *Spec) { s.Workers, s.Method = 2, "instructions" }, "--method instructions runs its sessions"},
	} {
		s := valid()
		tt.edit(&s)
		err := s.Validate()
		checkInvalid(t, s, err, tt.flag)
	}
}

// A duet's flags without --method duet, and what a duet cannot do, are
// refused with the flag named; on a machine of 4 CPUs a twin may have 2.
func TestValidateDuet(t *testing.T) {
	duet := func(s *Spec) { s.Method, s.Rounds = "duet", 16 }
	for _, tt := range []struct {
		edit func(*Spec)
		flag string // in the error; "" for none
	}{
		{func(s *Spec) {}, ""},
		{duet, ""},
		{func(s *Spec) { s.TwinDSN = "host=b" }, "--twin-dsn is the second server of --method duet"},
		{func(s *Spec) { s.Choose("twin-cpus") }, "--twin-cpus is each twin's CPU quota"},
		{func(s *Spec) { duet(s); s.TwinCPUs = 2 }, ""},
		{func(s *Spec) { duet(s); s.TwinCPUs = 2.5 }, "--twin-cpus 2.5: want more than 0 and at most half"},
		{func(s *Spec) { duet(s); s.DSN = "host=a" }, "needs its twin: give --twin-dsn"},
		{func(s *Spec) { duet(s); s.TwinDSN = "host=b" }, "--twin-dsn is the twin of --dsn"},
		{func(s *Spec) { duet(s); s.DSN, s.TwinDSN = "host=a", "host=a" }, "names the same server as --dsn"},
		{func(s *Spec) { duet(s); s.DSN, s.TwinDSN = "host=a", "host=b" }, ""},
		{func(s *Spec) { duet(s); s.Rounds = 7 }, "--rounds 7: a duet takes its phases in pairs"},
		{func(s *Spec) { duet(s); s.Workers = 2 }, "--workers: --method duet"},
		{func(s *Spec) { duet(s); s.Standby = "sync" }, "--standby with --method duet"},
		{func(s *Spec) { duet(s); s.Replay.Passes = 1 }, "--replay-passes with --method duet"},
		// split,duet is a duet with a split of the first twin beside it:
		// the duet's rules, and the split's even sessions.
		{func(s *Spec) { duet(s); s.Method = "split,duet"; s.Clients = 16; s.Choose("clients") }, ""},
		{func(s *Spec) { duet(s); s.Method = "split,duet"; s.Clients = 5; s.Choose("clients") }, "--clients 5 with --method split,duet"},
		{func(s *Spec) { duet(s); s.Method = "split,duet"; s.DSN = "host=a" }, "needs its twin: give --twin-dsn"},
		{func(s *Spec) { duet(s); s.Method = "split,duet"; s.Workers = 2 }, "--workers: --method duet"},
	} {
		s := valid()
		tt.edit(&s)
		err := s.ValidateDuet(4)
		checkInvalid(t, s, err, tt.flag)
	}
}

// Choosing on a copy leaves the original's choices as they were.
func TestChooseCopies(t *testing.T) {
	a := valid()
	a.Choose("clients")
	b := a
	b.Choose("warmup")
	b.Unchoose("clients")
	if !a.IsChosen("clients") || a.IsChosen("warmup") || b.IsChosen("clients") || !b.IsChosen("warmup") {
		t.Errorf("a %v, b %v; want a {clients}, b {warmup}", a.Chosen, b.Chosen)
	}
}

// Session counts read back as they were written; bad ones are refused.
func TestParseSessions(t *testing.T) {
	got, err := ParseSessions(" 1, 2,8 ")
	if err != nil || FormatSessions(got) != "1,2,8" {
		t.Errorf("ParseSessions = %v, %v; want 1,2,8", got, err)
	}
	for _, bad := range []string{"", "0", "2,1", "1,1", "x", "1001"} {
		if _, err := ParseSessions(bad); err == nil {
			t.Errorf("ParseSessions(%q): no error", bad)
		}
	}
}

// A duet runs at DefaultDuetLoad unless something says otherwise: a rate
// or a load given, a closed loop asked for, or what a rate cannot run
// with.
func TestAtDefaultLoad(t *testing.T) {
	for _, tt := range []struct {
		name  string
		set   func(*Spec)
		fixed bool
		want  bool
	}{
		{"the default", func(*Spec) {}, false, true},
		{"--closed-loop", func(s *Spec) { s.ClosedLoop = true }, false, false},
		{"--rate", func(s *Spec) { s.Rate = 100; s.Choose("rate") }, false, false},
		{"--load", func(s *Spec) { s.LoadPct = 30; s.Choose("load") }, false, false},
		{"--load sweep", func(s *Spec) { s.Loads = []float64{25, 50}; s.Choose("load") }, false, false},
		{"--sessions", func(s *Spec) { s.Sessions = []int{1, 2} }, false, false},
		{"--workload replay", func(s *Spec) { s.Workload = "replay" }, false, false},
		{"fixed work", func(*Spec) {}, true, false},
		{"a study", func(s *Spec) { s.Study = "targets" }, false, false},
		{"not a duet", func(s *Spec) { s.Method = result.MethodRounds }, false, false},
		{"--dsn", func(s *Spec) { s.DSN = "host=/tmp" }, false, false},
	} {
		s := Default()
		s.Method = result.MethodDuet
		tt.set(&s)
		if got := s.AtDefaultLoad(tt.fixed); got != tt.want {
			t.Errorf("%s: AtDefaultLoad = %v; want %v", tt.name, got, tt.want)
		}
	}
}
