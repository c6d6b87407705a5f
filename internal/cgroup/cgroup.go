// Package cgroup gives a set of processes an equal, fixed share of the
// machine's CPU: a control group with a CPU quota, which a duet's twins
// each get one of, so that a twin that waits (an observer blocked on a
// slow sink) cannot lend its CPU to the other and double the apparent
// cost.
//
// It uses cgroup v1's cpu controller where it is mounted
// (/sys/fs/cgroup/cpu: cpu.cfs_quota_us over cpu.cfs_period_us), else
// cgroup v2 with the cpu controller enabled (cpu.max). Every group is
// journaled before it is made, so that `obsbench restore` removes it after
// obsbench was killed.
package cgroup

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/obsbench/obsbench/internal/collect"
	"github.com/obsbench/obsbench/internal/poll"
)

// Period is the length of the CPU quota's period, in microseconds: the
// kernel's default (100 ms).
const Period = 100000

// Prefix starts the name of every group obsbench makes.
const Prefix = "obsbench-"

// Root is where cgroup hierarchies are mounted on Linux; Find takes
// another for tests.
const Root = "/sys/fs/cgroup"

// Hierarchy is a mounted cgroup hierarchy that can limit CPU.
type Hierarchy struct {
	// Dir is the directory new groups are made in.
	Dir string
	// AcctDir is where v1's cpuacct controller is mounted (Dir itself when
	// it is mounted with cpu): a group is made there too, to read the CPU
	// its processes used. Empty for v2, whose cpu.stat has it.
	AcctDir string
	// V2 says it is the unified hierarchy (cpu.max), not v1 (cfs files).
	V2 bool
}

// UnavailableError says this machine has no cgroup hierarchy obsbench may
// limit CPU with, and why.
type UnavailableError struct{ Reason string }

func (e *UnavailableError) Error() string {
	return "no usable cgroup to give each twin its CPU share: " + e.Reason
}

// Find returns the hierarchy groups are made in under root (Root): v1's
// cpu controller if mounted and writable, else v2 with the cpu controller
// enabled.
func Find(root string) (Hierarchy, error) {
	v1 := filepath.Join(root, "cpu")
	if _, err := os.Stat(filepath.Join(v1, "cpu.cfs_quota_us")); err == nil {
		if err := writable(v1); err != nil {
			return Hierarchy{}, &UnavailableError{Reason: fmt.Sprintf("%s is not writable (%v): run as root, or with the cpu controller delegated to you", v1, err)}
		}
		for _, acct := range []string{v1, filepath.Join(root, "cpuacct")} {
			if _, err := os.Stat(filepath.Join(acct, "cpuacct.usage")); err == nil && writable(acct) == nil {
				return Hierarchy{Dir: v1, AcctDir: acct}, nil
			}
		}
		return Hierarchy{}, &UnavailableError{Reason: fmt.Sprintf("%s has no cpuacct controller beside it (%s/cpuacct) to read each twin's CPU", v1, root)}
	}
	for _, dir := range []string{root, filepath.Join(root, "unified")} {
		b, err := os.ReadFile(filepath.Join(dir, "cgroup.subtree_control"))
		if err != nil {
			continue
		}
		if !strings.Contains(" "+string(bytes.TrimSpace(b))+" ", " cpu ") {
			continue
		}
		if err := writable(dir); err != nil {
			return Hierarchy{}, &UnavailableError{Reason: fmt.Sprintf("%s is not writable (%v)", dir, err)}
		}
		return Hierarchy{Dir: dir, V2: true}, nil
	}
	return Hierarchy{}, &UnavailableError{Reason: fmt.Sprintf("neither cgroup v1's cpu controller (%s/cpu) nor cgroup v2 with the cpu controller enabled in cgroup.subtree_control is mounted", root)}
}

func writable(dir string) error {
	return syscall.Access(dir, 2 /* W_OK */)
}

// Group is a control group obsbench made.
type Group struct {
	h       Hierarchy
	dir     string
	acctDir string // v1: the group in the cpuacct hierarchy (dir when comounted)
	// CPUs is the group's quota in CPUs.
	CPUs float64
}

// Dir is the group's directory.
func (g *Group) Dir() string { return g.dir }

// Create makes group name (Prefix is added) in h with a quota of cpus
// CPUs. The caller journals g's directory (Path) before calling it.
func Create(h Hierarchy, name string, cpus float64) (*Group, error) {
	dirs := Paths(h, name)
	g := &Group{h: h, dir: dirs[0], acctDir: dirs[len(dirs)-1], CPUs: cpus}
	for i, dir := range dirs {
		if err := os.Mkdir(dir, 0o755); err != nil {
			var undo []error
			for _, made := range dirs[:i] {
				undo = append(undo, Remove(made))
			}
			return nil, errors.Join(append([]error{fmt.Errorf("create cgroup: %w", err)}, undo...)...)
		}
	}
	quota := int64(cpus * Period)
	var err error
	if h.V2 {
		err = write(g.dir, "cpu.max", fmt.Sprintf("%d %d", quota, Period))
	} else {
		err = errors.Join(write(g.dir, "cpu.cfs_period_us", strconv.Itoa(Period)),
			write(g.dir, "cpu.cfs_quota_us", strconv.FormatInt(quota, 10)))
	}
	if err != nil {
		return nil, errors.Join(err, g.Remove())
	}
	return g, nil
}

// Path is where group name (Prefix added) lives in h.
func Path(h Hierarchy, name string) string { return filepath.Join(h.Dir, Prefix+name) }

// Paths are the directories of group name in h: its cpu group, and its
// cpuacct group where that is another hierarchy.
func Paths(h Hierarchy, name string) []string {
	dirs := []string{Path(h, name)}
	if h.AcctDir != "" && h.AcctDir != h.Dir {
		dirs = append(dirs, filepath.Join(h.AcctDir, Prefix+name))
	}
	return dirs
}

// Quota reads the group's quota back, in CPUs.
func (g *Group) Quota() (float64, error) {
	if g.h.V2 {
		b, err := os.ReadFile(filepath.Join(g.dir, "cpu.max"))
		if err != nil {
			return 0, err
		}
		f := strings.Fields(string(b))
		if len(f) != 2 || f[0] == "max" {
			return 0, fmt.Errorf("%s/cpu.max: no quota (%q)", g.dir, strings.TrimSpace(string(b)))
		}
		q, err1 := strconv.ParseFloat(f[0], 64)
		p, err2 := strconv.ParseFloat(f[1], 64)
		if err := errors.Join(err1, err2); err != nil {
			return 0, err
		}
		return q / p, nil
	}
	q, err1 := readInt(g.dir, "cpu.cfs_quota_us")
	p, err2 := readInt(g.dir, "cpu.cfs_period_us")
	if err := errors.Join(err1, err2); err != nil {
		return 0, err
	}
	if q < 0 {
		return 0, fmt.Errorf("%s: no quota", g.dir)
	}
	return float64(q) / float64(p), nil
}

// Add moves each process (all of its threads) and every process descended
// from it into the group; processes they start later are born in it.
func (g *Group) Add(pids ...int) error {
	for _, pid := range collect.Descendants(pids...) {
		for _, dir := range g.dirs() {
			err := write(dir, "cgroup.procs", strconv.Itoa(pid))
			if err != nil && !errors.Is(err, syscall.ESRCH) { // exited meanwhile
				return fmt.Errorf("move process %d into %s: %w", pid, dir, err)
			}
		}
	}
	return nil
}

func (g *Group) dirs() []string {
	if g.acctDir == g.dir {
		return []string{g.dir}
	}
	return []string{g.dir, g.acctDir}
}

// Usage is the CPU the group's processes used so far, in seconds (those
// that left it included).
func (g *Group) Usage() (float64, error) {
	if g.h.V2 {
		return statValue(g.dir, "usage_usec", 1e6)
	}
	n, err := readInt(g.acctDir, "cpuacct.usage")
	return float64(n) / 1e9, err
}

// Procs lists the processes in the group.
func (g *Group) Procs() ([]int, error) { return procs(g.dir) }

// Throttled is how long, in seconds, the group's processes were held back
// by the quota so far: a twin held back often was CPU-bound up to its share.
func (g *Group) Throttled() (float64, error) {
	if g.h.V2 {
		return statValue(g.dir, "throttled_usec", 1e6)
	}
	return statValue(g.dir, "throttled_time", 1e9) // v1: nanoseconds
}

// statValue reads key from dir's cpu.stat, divided by unit.
func statValue(dir, key string, unit float64) (float64, error) {
	b, err := os.ReadFile(filepath.Join(dir, "cpu.stat"))
	if err != nil {
		return 0, err
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), key+" "); ok {
			n, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			return n / unit, err
		}
	}
	return 0, fmt.Errorf("%s/cpu.stat has no %s", dir, key)
}

// Remove moves what is left in the group back to its parents and removes
// it.
func (g *Group) Remove() error {
	var errs []error
	for _, dir := range g.dirs() {
		errs = append(errs, Remove(dir))
	}
	return errors.Join(errs...)
}

// Remove removes the group at dir (made by Create): its processes go back
// to the parent group first. A group already gone is not an error.
//
// A server left running in the group (after a kill -9 of obsbench) may fork
// a child between the read of cgroup.procs and the move of its parent, and
// a killed process is still counted until it has exited, so the moves are
// repeated until the group is empty and rmdir is retried while the kernel
// says the group is busy, for at most removeWait.
func Remove(dir string) error {
	if !strings.HasPrefix(filepath.Base(dir), Prefix) {
		return fmt.Errorf("%s is not a cgroup obsbench made", dir)
	}
	var rmErr error // the last removal's
	failed := func() error {
		left, _ := procs(dir)
		return fmt.Errorf("remove cgroup %s (processes still in it: %v): %w", dir, left, rmErr)
	}
	return poll.Until(context.Background(), removeWait, 20*time.Millisecond, func() (bool, error) {
		pids, err := procs(dir)
		if errors.Is(err, os.ErrNotExist) {
			return true, nil
		}
		for _, pid := range pids {
			if err := write(filepath.Dir(dir), "cgroup.procs", strconv.Itoa(pid)); err != nil && !errors.Is(err, syscall.ESRCH) {
				return false, fmt.Errorf("move process %d out of %s: %w", pid, dir, err)
			}
		}
		rmErr = syscall.Rmdir(dir)
		if rmErr == nil || errors.Is(rmErr, syscall.ENOENT) {
			return true, nil
		}
		if !errors.Is(rmErr, syscall.EBUSY) {
			return false, failed()
		}
		return false, nil
	}, failed)
}

// removeWait bounds how long Remove keeps moving processes out of a busy
// group.
const removeWait = 5 * time.Second

func procs(dir string) ([]int, error) {
	b, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
	if err != nil {
		return nil, err
	}
	var out []int
	for _, f := range strings.Fields(string(b)) {
		if n, err := strconv.Atoi(f); err == nil {
			out = append(out, n)
		}
	}
	return out, nil
}

func readInt(dir, file string) (int64, error) {
	b, err := os.ReadFile(filepath.Join(dir, file))
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
}

func write(dir, file, value string) error {
	f, err := os.OpenFile(filepath.Join(dir, file), os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	_, werr := f.Write([]byte(value))
	return errors.Join(werr, f.Close())
}
