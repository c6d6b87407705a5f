package sidebyside

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"runtime"
	"sync"
	"syscall"
	"time"

	moremath "github.com/aclements/go-moremath/stats"

	"github.com/obsbench/obsbench/internal/cgroup"
	"github.com/obsbench/obsbench/internal/driver"
	"github.com/obsbench/obsbench/internal/experiment"
	"github.com/obsbench/obsbench/internal/journal"
	"github.com/obsbench/obsbench/internal/stats"
	"github.com/obsbench/obsbench/internal/workload"
)

// TwinShare is each twin's CPU quota as a share of the machine's CPUs: the
// share obsbench run --method duet gives its twins.
const TwinShare = 0.35

// Server is a managed server a bench can copy into a twin
// (postgres.Instance, mariadb.Instance).
type Server interface {
	PID() (int, error)
	Stop() error
}

// Twins are a managed server and a copy of it (its StartCopy), each with
// its processes in a cgroup of its own at an equal CPU quota: a bench's
// duet, where two tools run at the same time, one against each twin, and
// swap twins phase by phase (DuetPhase), so that the machine's drift falls
// on both alike and a difference between the twins cancels.
type Twins[S Server] struct {
	Servers [2]S
	Groups  [2]*cgroup.Group
	set     *cgroup.Set
	logf    func(string, ...any)
}

// StartTwins copies first (already loaded) into a twin with copyOf and
// puts each server in its group. Close stops the copy and removes the
// groups, logging a failure to logf; first stays the caller's.
func StartTwins[S Server](ctx context.Context, first S, copyOf func(context.Context, func(string, ...any)) (S, error), logf func(string, ...any)) (*Twins[S], error) {
	h, err := cgroup.Find(cgroup.Root)
	if err != nil {
		return nil, err
	}
	second, err := copyOf(ctx, logf)
	if err != nil {
		return nil, err
	}
	t := &Twins[S]{Servers: [2]S{first, second}, logf: logf}
	if t.set, err = cgroup.NewSet(journal.Dir(os.Getenv)); err != nil {
		second.Stop()
		return nil, err
	}
	share := TwinShare * float64(runtime.NumCPU())
	for i, srv := range t.Servers {
		pid, err := srv.PID()
		if err == nil {
			t.Groups[i], err = t.set.Create(h, fmt.Sprintf("%d-bench-twin-%s", os.Getpid(), experiment.TwinNames[i]), share)
		}
		if err == nil {
			err = t.Groups[i].Add(pid)
		}
		if err != nil {
			t.Close()
			return nil, err
		}
	}
	logf("twins a and b, each held to %.2f CPU", share)
	return t, nil
}

// Close removes the groups (their processes go back to the root) and
// stops the copy, logging what fails: benches defer it, so the copy is
// stopped on every return, Ctrl-C included.
func (t *Twins[S]) Close() {
	var errs []error
	if t.set != nil {
		errs = append(errs, t.set.Close())
	}
	if err := errors.Join(append(errs, t.Servers[1].Stop())...); err != nil {
		t.logf("%v", err)
	}
}

// DuetPhase runs one phase of a bench's duet (from 1): obsbench's side
// against twin experiment.DuetOn(phase) (a, b, b, a, as a duet's
// observer) and its peer tool against the other, at the same time, each
// given its twin; the error names the side that failed.
func DuetPhase(phase int, peerName string, obsbench, peer func(twin int) error) error {
	on := experiment.DuetOn(phase, false)
	var errs [2]error
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); errs[0] = obsbench(on) }()
	go func() { defer wg.Done(); errs[1] = peer(1 - on) }()
	wg.Wait()
	for i, side := range []string{"obsbench", peerName} {
		if errs[i] != nil {
			return fmt.Errorf("phase %d, %s: %w", phase, side, errs[i])
		}
	}
	return nil
}

// RunChild runs this program again with args, in group, and decodes the
// JSON it prints into v: a bench's own side of a duet, in a process that
// can be put in its twin's group.
func RunChild(ctx context.Context, group *cgroup.Group, v any, args ...string) error {
	return RunChildEnv(ctx, group, nil, v, args...)
}

// RunChildEnv is RunChild with env added to the child's environment: a
// password, which a command line would show to every account.
func RunChildEnv(ctx context.Context, group *cgroup.Group, env []string, v any, args ...string) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, self, args...)
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // Ctrl-C reaches the bench, which cancels ctx
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := runIn(cmd, group); err != nil {
		return fmt.Errorf("%w\n%s", err, errOut.String())
	}
	if err := json.Unmarshal(out.Bytes(), v); err != nil {
		return fmt.Errorf("the bench's child printed %q: %w", out.String(), err)
	}
	return nil
}

// Pairs sums up a duet's ratios of the two tools, one a phase, by pairs
// of consecutive phases (1-2, 3-4, ...): in each pair the first tool ran
// once against each twin, so a difference between the twins cancels in
// the pair's ratio, the geometric mean of its two phases'.
type Pairs struct {
	Median float64 // of the pairs' ratios
	CV     float64 // their coefficient of variation
	N      int     // how many pairs
}

// PairsOf sums up phases, a duet's ratios one a phase, by pairs.
func PairsOf(phases []float64) Pairs {
	var pairs []float64
	for i := 0; i+1 < len(phases); i += 2 {
		pairs = append(pairs, math.Sqrt(phases[i]*phases[i+1]))
	}
	return Pairs{Median: stats.Median(pairs), CV: CV(pairs), N: len(pairs)}
}

// CV is the coefficient of variation of xs: their sample standard
// deviation over their mean.
func CV(xs []float64) float64 { return moremath.StdDev(xs) / moremath.Mean(xs) }

// runIn runs cmd to its end, in group when there is one (moved there as it
// starts, before it has connected to anything).
func runIn(cmd *exec.Cmd, group *cgroup.Group) error {
	if err := cmd.Start(); err != nil {
		return err
	}
	if group != nil {
		if err := group.Add(cmd.Process.Pid); err != nil {
			cmd.Process.Kill()
			cmd.Wait()
			return err
		}
	}
	return cmd.Wait()
}

// ChildResult is what a bench's child driver prints: its measured run.
type ChildResult struct {
	Rated, Executed int64
	ClientCPU       float64 // seconds, the child's process over the measured run
}

// DriveChild is a child driver's whole life (RunChild's other end): a
// warm-up run and a measured run of wl through dial, the measured one
// printed on standard output as a ChildResult.
func DriveChild(ctx context.Context, wl workload.Meta, dial driver.Dialer, clients, procs int, warmup, duration time.Duration) error {
	if warmup > 0 {
		if err := RunDriver(ctx, driver.Config{Clients: clients, Duration: warmup, Procs: procs}, dial, wl, nil); err != nil {
			return fmt.Errorf("warm-up: %w", err)
		}
	}
	var s Sample
	if err := RunDriver(ctx, driver.Config{Clients: clients, Duration: duration, Procs: procs}, dial, wl, &s); err != nil {
		return err
	}
	return json.NewEncoder(os.Stdout).Encode(ChildResult{Rated: s.Rated, Executed: s.Executed, ClientCPU: s.ClientCPU})
}
