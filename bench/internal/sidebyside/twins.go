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

	moremath "github.com/aclements/go-moremath/stats"

	"github.com/obsbench/obsbench/internal/cgroup"
	"github.com/obsbench/obsbench/internal/experiment"
	"github.com/obsbench/obsbench/internal/journal"
	"github.com/obsbench/obsbench/internal/server"
	"github.com/obsbench/obsbench/internal/stats"
)

// TwinShare is each twin's CPU quota as a share of the machine's CPUs: the
// share obsbench run --method duet gives its twins.
const TwinShare = 0.35

// Twins are a managed PostgreSQL and a copy of it (server.StartCopy), each
// with its processes in a cgroup of its own at an equal CPU quota: a
// bench's duet, where two tools run at the same time, one against each
// twin, and swap twins phase by phase (TwinOf), so that the machine's
// drift falls on both alike and a difference between the twins cancels.
type Twins struct {
	PG     [2]*server.Postgres
	Groups [2]*cgroup.Group
	set    *cgroup.Set
}

// StartTwins copies first (already loaded) into a twin and puts each
// server in its group. Close stops the copy and removes the groups; first
// stays the caller's.
func StartTwins(ctx context.Context, first *server.Postgres, logf func(string, ...any)) (*Twins, error) {
	h, err := cgroup.Find()
	if err != nil {
		return nil, err
	}
	copy, err := first.StartCopy(ctx, logf)
	if err != nil {
		return nil, err
	}
	t := &Twins{PG: [2]*server.Postgres{first, copy}}
	if t.set, err = cgroup.NewSet(journal.Dir()); err != nil {
		copy.Stop()
		return nil, err
	}
	share := TwinShare * float64(runtime.NumCPU())
	for i, pg := range t.PG {
		pid, err := pg.PID()
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
// stops the copy.
func (t *Twins) Close() error {
	var errs []error
	if t.set != nil {
		errs = append(errs, t.set.Close())
	}
	return errors.Join(append(errs, t.PG[1].Stop())...)
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
	self, err := os.Executable()
	if err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, self, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // Ctrl-C reaches the bench, which cancels ctx
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := RunIn(cmd, group); err != nil {
		return fmt.Errorf("%w\n%s", err, errOut.String())
	}
	if err := json.Unmarshal(out.Bytes(), v); err != nil {
		return fmt.Errorf("the bench's child printed %q: %w", out.String(), err)
	}
	return nil
}

// PairRatios are the geometric means of consecutive phases' ratios (1-2,
// 3-4, ...): in each pair the first tool ran once against each twin, so a
// difference between the twins cancels.
func PairRatios(phases []float64) []float64 {
	var out []float64
	for i := 0; i+1 < len(phases); i += 2 {
		out = append(out, math.Sqrt(phases[i]*phases[i+1]))
	}
	return out
}

// Spread is the median of xs and their coefficient of variation (sample
// standard deviation over the mean).
func Spread(xs []float64) (median, cv float64) {
	return stats.Median(xs), moremath.StdDev(xs) / moremath.Mean(xs)
}

// RunIn runs cmd to its end, in group when there is one (moved there as it
// starts, before it has connected to anything).
func RunIn(cmd *exec.Cmd, group *cgroup.Group) error {
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
