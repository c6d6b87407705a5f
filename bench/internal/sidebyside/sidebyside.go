// Package sidebyside holds what the benches share: the order of each
// round, the driver's run measured the way a peer tool's process is
// (pgbench, sysbench) and the peer's run, this process's CPU, a workload
// with its dataset and the one statement it prepares, the wait until a
// PostgreSQL run's sessions are gone, a build of obsbench to run, a
// bench's progress lines, and its report: the machine and command it
// names, its goals' verdicts and its publication.
package sidebyside

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/obsbench/obsbench/internal/cgroup"
	"github.com/obsbench/obsbench/internal/collect"
	"github.com/obsbench/obsbench/internal/dataset"
	"github.com/obsbench/obsbench/internal/driver"
	"github.com/obsbench/obsbench/internal/engine/postgres"
	"github.com/obsbench/obsbench/internal/workload"
)

// Order is the order the tools run in round: a shuffle drawn from seed and
// the round, so that a seed repeats a whole experiment.
func Order(seed uint64, round int, tools ...string) []string {
	order := append([]string(nil), tools...)
	rand.New(rand.NewPCG(seed, uint64(round))).Shuffle(len(order), func(i, j int) {
		order[i], order[j] = order[j], order[i]
	})
	return order
}

// Sample is one measured run of one tool.
type Sample struct {
	Tool            string
	Round, Position int
	Rated           int64   // statements counted for statements/s
	Executed        int64   // statements the CPU times are divided by
	Seconds         float64 // the measured duration
	ClientCPU       float64 // seconds, the tool's own process
	ServerCPU       float64 // seconds, the server's processes
	ReportedTPS     float64 // the tool's own transactions/s where it reports them (pgbench's tps), for reference
}

func (s Sample) Rate() float64         { return float64(s.Rated) / s.Seconds }
func (s Sample) ClientMicros() float64 { return 1e6 * s.ClientCPU / float64(s.Executed) }
func (s Sample) ServerMicros() float64 { return 1e6 * s.ServerCPU / float64(s.Executed) }

// RunDriver runs driver.Run over a new wl with cfg (no warm-up of its own)
// and, when s is not nil, records it: statements/s counts result.Measured
// (completed inside the window); CPU per statement divides by
// result.Executed (also the few in flight when it closed), since the CPU
// was spent on all of them. This process does nothing else meanwhile, so
// its CPU is the driver's.
func RunDriver(ctx context.Context, cfg driver.Config, dial driver.Dialer, wl workload.Meta, s *Sample) error {
	t0, start := SelfCPU(), time.Now()
	res, err := driver.Run(ctx, cfg, dial, wl.New())
	cpu := SelfCPU() - t0
	if err != nil {
		return err
	}
	if took := time.Since(start); took < cfg.Duration {
		return fmt.Errorf("driver.Run returned after %v, before its %v window ended", took, cfg.Duration)
	}
	if s == nil {
		return nil
	}
	s.ClientCPU = cpu.Seconds()
	s.Rated, s.Executed = res.Measured, res.Executed
	return nil
}

// RunPeer runs a peer tool's cmd to its end, in group when there is one,
// and returns what it printed (standard output and error together) and
// its CPU time. The tool runs in a process group of its own, so that
// Ctrl-C reaches the bench, which cancels the command's context.
func RunPeer(cmd *exec.Cmd, group *cgroup.Group) (out []byte, cpu time.Duration, err error) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	if err := runIn(cmd, group); err != nil {
		return nil, 0, fmt.Errorf("%s: %w\n%s", strings.Join(cmd.Args, " "), err, buf.String())
	}
	return buf.Bytes(), cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime(), nil
}

var (
	rePgbenchTxns = regexp.MustCompile(`(?m)^number of transactions actually processed: (\d+)`)
	rePgbenchTPS  = regexp.MustCompile(`(?m)^tps = ([0-9.]+) \(without initial connection time\)`)
)

// PgbenchResult reads pgbench's output: the transactions it processed
// and its tps, which divides them by its own timing without the
// connection time.
func PgbenchResult(out []byte) (txns int64, tps float64, err error) {
	t, r := rePgbenchTxns.FindSubmatch(out), rePgbenchTPS.FindSubmatch(out)
	if t == nil || r == nil {
		return 0, 0, fmt.Errorf("cannot parse pgbench output:\n%s", out)
	}
	txns, _ = strconv.ParseInt(string(t[1]), 10, 64)
	tps, _ = strconv.ParseFloat(string(r[1]), 64)
	return txns, tps, nil
}

// SelfCPU is the user and system CPU time of this process, all threads.
func SelfCPU() time.Duration {
	d, err := collect.SelfCPU()
	if err != nil {
		panic(err)
	}
	return d
}

// Machine names this machine for a report's "machine:" line: its CPUs
// and its kernel.
func Machine() string {
	kernel, _ := os.ReadFile("/proc/sys/kernel/osrelease")
	return fmt.Sprintf("nproc %d, kernel %s", runtime.NumCPU(), strings.TrimSpace(string(kernel)))
}

// provenance is a report's first lines: the command that wrote it, when,
// and on what machine.
func provenance(command string) string {
	return fmt.Sprintf("- command: `%s`\n- date: %s\n- machine: %s\n", command, time.Now().Format("2006-01-02 15:04:05 MST"), Machine())
}

// Report is a bench's markdown report as it is written: its title and
// provenance, then the bench's lines.
type Report struct{ strings.Builder }

// NewReport starts the report titled title of the bench run as command.
func NewReport(title, command string) *Report {
	r := &Report{}
	r.WriteString("# " + title + "\n\n" + provenance(command))
	return r
}

// Line adds a line to the report, formatted as by fmt.Sprintf.
func (r *Report) Line(format string, args ...any) { fmt.Fprintf(r, format+"\n", args...) }

// BuildObsbench makes a scratch directory for bench (the caller removes
// it) and builds this checkout's obsbench into it, for a bench that runs
// obsbench as a command or as workers; it returns both paths.
func BuildObsbench(ctx context.Context, bench string) (dir, exe string, err error) {
	if dir, err = os.MkdirTemp("", "obsbench-bench-"+bench+"-"); err != nil {
		return "", "", err
	}
	exe = filepath.Join(dir, "obsbench")
	if out, err := exec.CommandContext(ctx, "go", "build", "-o", exe, "./cmd/obsbench").CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		return "", "", fmt.Errorf("go build: %v\n%s", err, out)
	}
	return dir, exe, nil
}

// RunObsbench runs the obsbench that BuildObsbench built, exe, with args:
// its standard error shows the run's progress, and its standard output,
// the text a bench keeps beside its report, is returned.
// A bench interrupted interrupts obsbench (SIGINT), which stops its
// servers and reverts what it changed; killed, it would leave them to the
// next run's reaping.
func RunObsbench(ctx context.Context, exe string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, exe, args...)
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 2 * time.Minute
	var text strings.Builder
	cmd.Stdout, cmd.Stderr = &text, os.Stderr
	err := cmd.Run()
	return text.String(), err
}

// Publish prints a bench's markdown report and writes it to path.
func Publish(path, report string) error {
	fmt.Print(report)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, []byte(report), 0o644)
}

// Workload is the workload named name and the dataset it runs on.
func Workload(name string) (workload.Meta, dataset.Dataset, error) {
	wl, err := workload.Lookup(name)
	if err != nil {
		return workload.Meta{}, dataset.Dataset{}, err
	}
	ds, err := dataset.Lookup(wl.Dataset)
	return wl, ds, err
}

// OneStatement returns the one statement wl prepares, taken from the
// workload itself so that the peer runs exactly the driver's text.
func OneStatement(ctx context.Context, wl workload.Meta) (string, error) {
	var rec recorder
	if _, err := wl.New().Worker(ctx, &rec, 0); err != nil {
		return "", err
	}
	if len(rec.sql) != 1 {
		return "", fmt.Errorf("workload %s: want one statement, got %q", wl.Name, rec.sql)
	}
	return rec.sql[0], nil
}

type recorder struct{ sql []string }

func (r *recorder) Prepare(_ context.Context, sql string) (workload.Stmt, error) {
	r.sql = append(r.sql, sql)
	return nil, nil
}

// StartPostgres starts a managed PostgreSQL from the installed binaries,
// with settings, and creates database in it. It returns the server, the
// binaries' directory (for pgbench) and stop, which stops the server and
// logs a failure to: benches defer it, so the server is stopped on every
// return, Ctrl-C included.
func StartPostgres(ctx context.Context, database string, settings map[string]string, logf func(string, ...any)) (pg *postgres.Instance, bin string, stop func(), err error) {
	if bin, err = postgres.FindBin(); err != nil {
		return nil, "", nil, err
	}
	pg, err = postgres.Start(ctx, postgres.InstanceOptions{BinDir: bin, Log: logf, Settings: settings})
	if err != nil {
		return nil, "", nil, err
	}
	stop = func() {
		if err := pg.Stop(); err != nil {
			logf("stopping the managed server: %v", err)
		}
	}
	if err := postgres.CreateDatabase(ctx, pg.DSN(database)); err != nil {
		stop()
		return nil, "", nil, err
	}
	return pg, bin, stop, nil
}

// WaitPostgresIdle waits until no client backend of database is left
// running or unreaped under the postmaster pm, so that a sampler of the
// server's CPU counts each run's backends once.
func WaitPostgresIdle(ctx context.Context, pm int, database string) error {
	deadline := time.Now().Add(10 * time.Second)
	for !backendsGone(pm, database) {
		if time.Now().After(deadline) {
			return errors.New("client backends still running 10s after the run")
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
	return nil
}

// backendsGone says whether no child of the postmaster pm is a client
// backend of database or unreaped.
func backendsGone(pm int, database string) bool {
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, dir := range dirs {
		b, err := os.ReadFile(filepath.Join(dir, "stat"))
		if err != nil {
			continue // exited meanwhile
		}
		i := bytes.LastIndexByte(b, ')')
		if i < 0 {
			continue
		}
		f := bytes.Fields(b[i+1:])
		if len(f) < 2 || string(f[1]) != strconv.Itoa(pm) {
			continue // not a server process
		}
		cmdline, _ := os.ReadFile(filepath.Join(dir, "cmdline"))
		if f[0][0] == 'Z' || bytes.HasPrefix(cmdline, []byte("postgres: postgres "+database+" ")) {
			return false
		}
	}
	return true
}

// FlagGiven says whether the command line gave the flag name (parsed by
// package flag): a bench whose default depends on another flag keeps a
// value given.
func FlagGiven(name string) bool {
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == name })
	return given
}

// Verdict is a goal's result in a report: PASS when ok, else FAIL.
func Verdict(ok bool) string {
	if ok {
		return "PASS"
	}
	return "FAIL"
}

// LoadPgbench loads pgbench -i's tables at scale into pg's database and
// creates the objects wl needs, and returns the server, its version and
// its postmaster's PID (whose process tree the benches sample).
func LoadPgbench(ctx context.Context, pg *postgres.Instance, database string, scale int, wl workload.Meta, logf func(string, ...any)) (srv *postgres.Server, version string, pmPID int, err error) {
	ds, err := dataset.Scaled("pgbench", scale)
	if err != nil {
		return nil, "", 0, err
	}
	srv = postgres.New(pg.DSN(database), postgres.Options{Restart: pg.Restart})
	logf("loading pgbench -i's tables at scale %d", scale)
	if err := srv.Load(ctx, ds); err != nil {
		return nil, "", 0, err
	}
	if err := srv.Setup(ctx, wl.SetupIn(workload.PostgreSQL)); err != nil {
		return nil, "", 0, err
	}
	if version, err = srv.Version(ctx); err != nil {
		return nil, "", 0, err
	}
	if pmPID, err = pg.PID(); err != nil {
		return nil, "", 0, err
	}
	return srv, version, pmPID, nil
}
