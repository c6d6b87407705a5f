package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/obsbench/obsbench/internal/cgroup"
	"github.com/obsbench/obsbench/internal/dataset"
	"github.com/obsbench/obsbench/internal/engine"
	"github.com/obsbench/obsbench/internal/engine/postgres"
	"github.com/obsbench/obsbench/internal/experiment"
	"github.com/obsbench/obsbench/internal/journal"
	"github.com/obsbench/obsbench/internal/result"
	"github.com/obsbench/obsbench/internal/server"
	"github.com/obsbench/obsbench/internal/spec"
	"github.com/obsbench/obsbench/internal/workload"
)

// twinGroups are the cgroup directories obsbench process pid makes for a
// duet's twins: twin a's server, b's, a's load, b's.
func twinGroups(t *testing.T, pid int) [4]string {
	t.Helper()
	h, err := cgroup.Find(cgroup.Root)
	if err != nil {
		t.Fatalf("this machine must give a duet its cgroups: %v", err)
	}
	var dirs [4]string
	for i, name := range experiment.TwinNames {
		for j, group := range []string{fmt.Sprintf("%d-twin-%s", pid, name), fmt.Sprintf("%d-twin-%s-load", pid, name)} {
			dirs[i+2*j] = cgroup.Path(h, group)
			t.Cleanup(func() { // a failed test leaves no group behind
				for _, dir := range cgroup.Paths(h, group) {
					cgroup.Remove(dir)
				}
			})
		}
	}
	return dirs
}

// groupWatch is what a watcher saw of the twins' groups while a run went on.
type groupWatch struct {
	mu    sync.Mutex
	quota [4]string          // cpu.cfs_quota_us (or cpu.max) as read
	comms [4]map[string]bool // the commands of the processes seen in each
}

// watchGroups polls the groups until stop is closed.
func watchGroups(dirs [4]string, stop <-chan struct{}) *groupWatch {
	w := &groupWatch{comms: [4]map[string]bool{{}, {}, {}, {}}}
	go func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
			}
			for i, dir := range dirs {
				q, err := os.ReadFile(filepath.Join(dir, "cpu.cfs_quota_us"))
				if err != nil {
					q, err = os.ReadFile(filepath.Join(dir, "cpu.max"))
				}
				if err != nil {
					continue
				}
				procs, _ := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
				w.mu.Lock()
				w.quota[i] = strings.TrimSpace(string(q))
				for _, f := range strings.Fields(string(procs)) {
					comm, _ := os.ReadFile("/proc/" + f + "/comm")
					w.comms[i][strings.TrimSpace(string(comm))] = true
				}
				w.mu.Unlock()
			}
		}
	}()
	return w
}

// seen reports whether every group existed and held processes.
func (w *groupWatch) seen() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, c := range w.comms {
		if len(c) == 0 {
			return false
		}
	}
	return true
}

// A duet on two managed PostgreSQL twins: each twin's server and worker
// run in a cgroup of their own that holds an equal CPU quota, the
// observer swaps twins A,B,B,A, its events are all recorded, the wait
// sampler's own cost is measured by sampling one twin and not the other,
// and the groups and their journal are gone after the run.
func TestDuetManaged(t *testing.T) {
	needServers(t)
	asWorkers(t)
	tmp, state := privateState(t)
	out := filepath.Join(tmp, "out")
	dirs := twinGroups(t, os.Getpid())
	stop := make(chan struct{})
	w := watchGroups(dirs, stop)
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"run", "-v", "--method", "duet", "--observers", "log-statements-file", "--rounds", "4",
		"--measure-collectors", "--waits", "10ms", "--duration", "2s", "--warmup", "500ms", "--clients", "4", "--seed", "3", "--out", out}, &stdout, &stderr)
	close(stop)
	if code != exitOK {
		t.Fatalf("exit %d\n%s", code, stderr.String())
	}
	if !strings.Contains(stderr.String(), spec.DefaultLoadNote) || !strings.Contains(stderr.String(), "capacity probe: ") {
		t.Errorf("stderr does not say the duet runs at its default load, found by probes:\n%s", stderr.String())
	}
	wantQuota := strconv.Itoa(int(spec.DefaultTwinShare * float64(runtime.NumCPU()) * cgroup.Period))
	worker := filepath.Base(os.Args[0])
	for i, dir := range dirs {
		name := experiment.TwinNames[i%2]
		if !strings.HasPrefix(w.quota[i], wantQuota) {
			t.Errorf("twin %s (group %d): quota %q during the run; want %s of every %d µs", name, i, w.quota[i], wantQuota, cgroup.Period)
		}
		// The quota is the server's: its load, in a group of its own,
		// does not dilute the overhead.
		if i < 2 && (!w.comms[i]["postgres"] || w.comms[i][worker]) {
			t.Errorf("twin %s's server group held %v; want its postgres processes and not its worker (%s)", name, w.comms[i], worker)
		}
		if i >= 2 && (!w.comms[i][worker] || w.comms[i]["postgres"]) {
			t.Errorf("twin %s's load group held %v; want its worker (%s) alone", name, w.comms[i], worker)
		}
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Errorf("%s still there after the run", dir)
		}
	}
	if left, _ := journal.List(state); len(left) > 0 {
		t.Errorf("journals left: %v", left)
	}
	runs, err := result.ReadRuns(filepath.Join(out, "results.jsonl"))
	if err != nil || len(runs) != 12 {
		t.Fatalf("results.jsonl: %d runs, %v; want 4 phases of the A/A arm, 4 of log-statements-file and 4 of the wait sampler", len(runs), err)
	}
	unsampled := map[string]int{}
	for _, r := range runs {
		d := r.Duet
		if r.Error != "" || r.Method != "duet" || d == nil {
			t.Fatalf("run %d (%s): method %s, error %q, duet %v", r.Seq, r.Condition, r.Method, r.Error, d)
		}
		if r.Driver.Rate == nil || r.Driver.Rate.Asked <= 0 {
			t.Errorf("run %d: no arrival rate (%+v); a duet runs at --load %d unless told otherwise", r.Seq, r.Driver.Rate, spec.DefaultDuetLoad)
		}
		if want := experiment.TwinNames[experiment.DuetOn(r.Round, experiment.DuetFlipped(3, r.Condition))]; d.On != want {
			t.Errorf("run %d, round %d: observer in twin %s; want %s", r.Seq, r.Round, d.On, want)
		}
		if d.Off.Throughput <= 0 || r.Driver.Throughput <= 0 || d.OnCPUs <= 0 || d.OffCPUs <= 0 || math.Abs(d.ShareCPUs-spec.DefaultTwinShare*float64(runtime.NumCPU())) > 1e-9 {
			t.Errorf("run %d: throughput %.0f against %.0f, CPUs %.2f and %.2f of %.2f; want both twins measured", r.Seq, r.Driver.Throughput, d.Off.Throughput, d.OnCPUs, d.OffCPUs, d.ShareCPUs)
		}
		if d.OnCPUs > 1.1*d.ShareCPUs || d.OffCPUs > 1.1*d.ShareCPUs {
			t.Errorf("run %d: twins used %.2f and %.2f CPUs; the quota is %.2f", r.Seq, d.OnCPUs, d.OffCPUs, d.ShareCPUs)
		}
		// Each twin's server CPU per statement, from its group, is the
		// group's CPU rate over the statements' rate; the loads are apart.
		for _, tw := range []struct {
			us, cpus float64
			drv      result.DriverResult
		}{{d.OnServerUS, d.OnCPUs, r.Driver}, {d.OffServerUS, d.OffCPUs, d.Off}} {
			want := 1e6 * tw.cpus * tw.drv.Seconds / float64(tw.drv.Measured)
			if tw.us <= 0 || math.Abs(tw.us-want) > 0.05*want {
				t.Errorf("run %d: server %.1f µs per statement; want about %.1f (its group's %.2f CPU over %.2f s and %d statements)",
					r.Seq, tw.us, want, tw.cpus, tw.drv.Seconds, tw.drv.Measured)
			}
		}
		if !d.LoadApart || d.OnLoadCPUs <= 0 || d.OffLoadCPUs <= 0 || d.OnLoadCPUs > d.ShareCPUs {
			t.Errorf("run %d: loads apart %v, %.2f and %.2f CPU; want each load in its group, under its %.2f", r.Seq, d.LoadApart, d.OnLoadCPUs, d.OffLoadCPUs, d.ShareCPUs)
		}
		if r.Waits == nil || r.Waits.Ticks == 0 {
			// A sampler's batch still running on a twin held by its
			// quota, on a machine busy with other tests, can end a 2 s
			// window with no sample (Stop waits for it a second): a
			// phase may, half of an arm's may not.
			unsampled[r.Condition]++
			t.Logf("run %d (%s): waits %+v: not sampled", r.Seq, r.Condition, r.Waits)
		}
		if r.Condition == "log-statements-file" && (r.Events == nil || r.Events.Recorded != r.Events.Executed || r.Events.Executed == 0) {
			t.Errorf("run %d: events %+v; want every statement of the observer's twin recorded", r.Seq, r.Events)
		}
	}
	for arm, n := range unsampled {
		if n > 2 {
			t.Errorf("%s: %d of its 4 phases not sampled; want the observer's twin sampled in 2 at least", arm, n)
		}
	}
	b, err := os.ReadFile(filepath.Join(out, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := result.ValidateSummary(b); err != nil {
		t.Errorf("summary.json: %v", err)
	}
	var s result.Summary
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	if i := slices.IndexFunc(s.Conditions, func(c result.ConditionSummary) bool { return c.Name == experiment.CollectorArm }); i < 0 ||
		s.Conditions[i].Overhead == nil || s.Conditions[i].Overhead.Verdict == "" || !strings.HasPrefix(s.Conditions[i].Method, "duet: 4 phases") || s.Conditions[i].ServerCost == nil {
		t.Errorf("conditions %+v; want the wait sampler's cost measured by duet", s.Conditions)
	}
	// The twin is a copy of the first server, made once its dataset was
	// loaded: the dataset is loaded once.
	if log := stderr.String(); strings.Count(log, "loading dataset") != 1 || !strings.Contains(log, "pg_basebackup of the server") {
		t.Errorf("want the dataset loaded once and the twin copied with pg_basebackup:\n%s", log)
	}
	for _, want := range []string{"duet of twin servers, 4 phases x 2s", "duet: 4 phases", "duet twins (each server held to", "srv +µs/stmt [CI]"} {
		if !printed(stdout.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, stdout.String())
		}
	}
}

// Ctrl-C in the middle of a duet removes the groups as the run ends; a
// kill -9 leaves them, and `obsbench restore` removes them from the
// journal.
func TestDuetGroupsAfterInterruptAndKill(t *testing.T) {
	needServers(t)
	asWorkers(t)
	tmp, state := privateState(t)
	args := func(out string) []string {
		return []string{"run", "--method", "duet", "--observers", "log-filtered-out", "--rounds", "4", "--duration", "3s",
			"--warmup", "500ms", "--clients", "2", "--out", out}
	}

	dirs := twinGroups(t, os.Getpid())
	stop := make(chan struct{})
	w := watchGroups(dirs, stop)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for deadline := time.Now().Add(2 * time.Minute); !w.seen() && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		}
		cancel()
	}()
	var stdout, stderr bytes.Buffer
	code := run(ctx, args(filepath.Join(tmp, "out1")), &stdout, &stderr)
	close(stop)
	if code != exitInterrupted || !w.seen() {
		t.Fatalf("exit %d, groups seen %v; want %d after the groups were made\n%s", code, w.seen(), exitInterrupted, stderr.String())
	}
	for _, dir := range dirs {
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Errorf("%s still there after Ctrl-C", dir)
		}
	}
	if left, _ := journal.List(state); len(left) > 0 {
		t.Errorf("journals left after Ctrl-C: %v", left)
	}

	cmd, out := startObsbench(t, state, args(filepath.Join(tmp, "out2"))...)
	dirs = twinGroups(t, cmd.Process.Pid)
	stop = make(chan struct{})
	w = watchGroups(dirs, stop)
	for deadline := time.Now().Add(2 * time.Minute); !w.seen(); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no twin groups within 2 minutes\n%s", out)
		}
	}
	close(stop)
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	t.Cleanup(func() { server.ReapStale(t.Logf) }) // the killed obsbench's servers
	for _, dir := range dirs {
		if _, err := os.Stat(dir); err != nil {
			t.Fatalf("%s gone right after kill -9 (%v): nothing for restore to do", dir, err)
		}
	}
	stdout.Reset()
	stderr.Reset()
	if code := run(context.Background(), []string{"restore"}, &stdout, &stderr); code != 0 {
		t.Fatalf("restore: exit %d: %s %s", code, stdout.String(), stderr.String())
	}
	if !strings.Contains(stdout.String(), "undid 4 change(s)") {
		t.Errorf("restore said %q; want the four groups (two servers', two loads') undone", stdout.String())
	}
	for _, dir := range dirs {
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Errorf("%s still there after restore", dir)
		}
	}
}

// What a duet refuses, each before anything is started or changed: a twin
// that is the first server under another address, a twin without the
// dataset, and a machine with no cgroup to hold the twins' CPU shares.
func TestDuetRefusals(t *testing.T) {
	needServers(t)
	tmp, state := privateState(t)
	dsn, settings := externalServer(t)
	other, _ := externalServer(t)
	before := settings()
	servers := serverDirs(t, tmp) // the external servers'
	// The same server over TCP instead of its Unix socket.
	host := regexp.MustCompile(`host=\S+`)
	sameOverTCP := host.ReplaceAllString(dsn, "host=127.0.0.1")

	noCgroup := t.TempDir()
	tests := []struct {
		name string
		args []string
		root string // the run's cgroup root, "" for the machine's
		want string
	}{
		{"same server", []string{"--dsn", dsn, "--twin-dsn", sameOverTCP, "--allow-changes"}, "",
			"--twin-dsn reaches the same server as --dsn (one sees the other's session): a duet needs two distinct servers"},
		{"no dataset", []string{"--dsn", dsn, "--twin-dsn", other, "--allow-changes"}, "",
			"--twin-dsn: the twin does not hold the dataset: dataset credit: count member"},
		{"no cgroup", nil, noCgroup,
			"--method duet: no usable cgroup to give each twin its CPU share: neither cgroup v1's cpu controller (" + noCgroup + "/cpu) nor cgroup v2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := filepath.Join(tmp, "out-"+strings.ReplaceAll(tt.name, " ", "-"))
			var stdout, stderr bytes.Buffer
			args := append([]string{"run", "--method", "duet", "--observers", "log-statements-file", "--out", out}, tt.args...)
			e := testEnv(&stdout, &stderr)
			e.CgroupRoot = tt.root
			code := e.run(context.Background(), args)
			first, _, _ := strings.Cut(stderr.String(), "\n")
			if code != exitUsage || !strings.Contains(first, tt.want) {
				t.Errorf("exit %d, %q; want %d and %q", code, stderr.String(), exitUsage, tt.want)
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Errorf("--out created")
			}
			if d := diffSettings(before, settings()); len(d) > 0 {
				t.Errorf("the server's settings changed: %v", d)
			}
			if d := serverDirs(t, tmp); len(d) != len(servers) {
				t.Errorf("server directories %v; want only the external servers' %v", d, servers)
			}
			if left, _ := journal.List(state); len(left) > 0 {
				t.Errorf("journals left: %v", left)
			}
			assertNoSecret(t, tmp, stdout.String()+stderr.String())
		})
	}
}

// A duet on two managed MariaDB twins: mariadbd and the worker of each in
// its own group, every statement of the observer's twin in its general
// log. No --method is given: a duet is the default where twins can run.
func TestDuetMariaDB(t *testing.T) {
	needServers(t)
	asWorkers(t)
	tmp := privateTemp(t)
	t.Setenv("OBSBENCH_STATE_DIR", filepath.Join(tmp, "state"))
	out := filepath.Join(tmp, "out")
	dirs := twinGroups(t, os.Getpid())
	stop := make(chan struct{})
	w := watchGroups(dirs, stop)
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"run", "--engine", "mariadb", "--observers", "general-log-file", "--rounds", "2",
		"--duration", "2s", "--warmup", "500ms", "--clients", "4", "--seed", "5", "--out", out}, &stdout, &stderr)
	close(stop)
	if code != exitOK {
		t.Fatalf("exit %d\n%s", code, stderr.String())
	}
	if want := "method duet: the observer's server and its twin"; !strings.Contains(stderr.String(), want) {
		t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
	}
	for i := range 2 {
		if !w.comms[i]["mariadbd"] {
			t.Errorf("twin %s's group held %v; want its mariadbd", experiment.TwinNames[i], w.comms[i])
		}
	}
	runs, err := result.ReadRuns(filepath.Join(out, "results.jsonl"))
	if err != nil || len(runs) != 4 {
		t.Fatalf("results.jsonl: %d runs, %v; want 2 phases of each arm", len(runs), err)
	}
	for _, r := range runs {
		if r.Error != "" || r.Duet == nil || r.Duet.Off.Throughput <= 0 {
			t.Fatalf("run %d (%s): error %q, duet %v", r.Seq, r.Condition, r.Error, r.Duet)
		}
		if r.Condition == "general-log-file" && (r.Events == nil || r.Events.Recorded != r.Events.Executed || r.Events.Executed == 0) {
			t.Errorf("run %d: events %+v; want every statement of the observer's twin logged", r.Seq, r.Events)
		}
	}
}

// A duet of two external servers that hold the same dataset: obsbench
// tells them apart, drives each from a worker in a group of its own, and
// leaves both servers' settings as they were, with no journal behind.
func TestDuetExternal(t *testing.T) {
	needServers(t)
	asWorkers(t)
	tmp, state := privateState(t)
	dsnA, settingsA := externalServer(t)
	dsnB, settingsB := externalServer(t)
	beforeA, beforeB := settingsA(), settingsB()
	wl, err := workload.Lookup("credit-top1")
	if err != nil {
		t.Fatal(err)
	}
	ds, err := dataset.Lookup(wl.Dataset)
	if err != nil {
		t.Fatal(err)
	}
	for _, dsn := range []string{dsnA, dsnB} {
		if err := postgres.New(dsn, postgres.Options{Schema: engine.Home}).Load(context.Background(), ds); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(tmp, "out")
	stdout, stderr := runOK(t, "run", "--method", "duet", "--dsn", dsnA, "--twin-dsn", dsnB, "--allow-changes",
		"--observers", "log-statements-file", "--rounds", "2", "--duration", "2s", "--warmup", "500ms", "--clients", "2", "--out", out)
	runs, err := result.ReadRuns(filepath.Join(out, "results.jsonl"))
	if err != nil || len(runs) != 4 {
		t.Fatalf("results.jsonl: %d runs, %v; want 2 phases of each arm", len(runs), err)
	}
	for _, r := range runs {
		// The servers are not on this machine: no quota holds them, and
		// only the loads are in groups.
		if d := r.Duet; r.Error != "" || d == nil || d.Off.Throughput <= 0 || d.OnLoadCPUs <= 0 || d.ShareCPUs != 0 || d.OnCPUs != 0 {
			t.Fatalf("run %d (%s): error %q, duet %+v; want the loads' CPU, no server share", r.Seq, r.Condition, r.Error, r.Duet)
		}
		if r.Condition == "log-statements-file" && (r.Events == nil || r.Events.Recorded != r.Events.Executed || r.Events.Executed == 0) {
			t.Errorf("run %d: events %+v; want every statement of the observer's twin logged", r.Seq, r.Events)
		}
	}
	if d := diffSettings(beforeA, settingsA()); len(d) > 0 {
		t.Errorf("--dsn's settings changed: %v", d)
	}
	if d := diffSettings(beforeB, settingsB()); len(d) > 0 {
		t.Errorf("--twin-dsn's settings changed: %v", d)
	}
	if left, _ := journal.List(state); len(left) > 0 {
		t.Errorf("journals left: %v", left)
	}
	assertNoSecret(t, tmp, stdout+stderr)
}
