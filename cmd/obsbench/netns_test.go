package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"golang.org/x/sys/unix"

	"github.com/obsbench/obsbench/internal/engine/postgres"
	"github.com/obsbench/obsbench/internal/engine/servertest"
)

// netns is a network namespace for the server and the coordinator and
// one for each worker, each worker's joined to the first by a veth pair
// of its own. Nothing is in the machine's own namespace: no other
// account reaches what the test starts.
type netns struct {
	prefix string
	// addr is the server's and the coordinator's address, on the first
	// namespace's loopback; each worker routes to it over its veth.
	addr    string
	workers int
}

// newNetns creates the namespaces; the test's end deletes them (and
// with them the veth pairs).
func newNetns(t *testing.T, workers int) *netns {
	t.Helper()
	n := &netns{prefix: fmt.Sprintf("obs%d", os.Getpid()), addr: "10.213.255.1", workers: workers}
	ip := func(args ...string) {
		t.Helper()
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			t.Fatalf("ip %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	c := n.coordinator()
	ip("netns", "add", c)
	t.Cleanup(func() { exec.Command("ip", "netns", "del", c).Run() })
	ip("-n", c, "link", "set", "lo", "up")
	ip("-n", c, "addr", "add", n.addr+"/32", "dev", "lo")
	for i := range workers {
		w, cEnd, wEnd := n.worker(fmt.Sprint(i)), fmt.Sprintf("%sc%d", n.prefix, i), fmt.Sprintf("%sw%d", n.prefix, i)
		ip("netns", "add", w)
		t.Cleanup(func() { exec.Command("ip", "netns", "del", w).Run() })
		ip("link", "add", cEnd, "netns", c, "type", "veth", "peer", "name", wEnd, "netns", w)
		ip("-n", c, "addr", "add", fmt.Sprintf("10.213.%d.1/24", i), "dev", cEnd)
		ip("-n", c, "link", "set", cEnd, "up")
		ip("-n", w, "addr", "add", n.workerAddr(i)+"/24", "dev", wEnd)
		ip("-n", w, "link", "set", wEnd, "up")
		ip("-n", w, "route", "add", n.addr+"/32", "via", fmt.Sprintf("10.213.%d.1", i))
	}
	return n
}

func (n *netns) coordinator() string        { return n.prefix + "-c" }
func (n *netns) worker(index string) string { return n.prefix + "-w" + index }
func (n *netns) workerAddr(i int) string    { return fmt.Sprintf("10.213.%d.2", i) }

// enter moves the calling goroutine's OS thread into the coordinator's
// namespace for good: the processes it starts are born there. The thread
// is never unlocked, so Go ends it with the test.
func (n *netns) enter(t *testing.T) {
	t.Helper()
	runtime.LockOSThread()
	f, err := os.Open(filepath.Join("/run/netns", n.coordinator()))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := unix.Setns(int(f.Fd()), unix.CLONE_NEWNET); err != nil {
		t.Fatalf("enter network namespace %s: %v", n.coordinator(), err)
	}
}

// hideScript writes a script that runs a command with a directory
// covered by an empty file system of its own.
func hideScript(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "obsbench-hide-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	path := filepath.Join(dir, "hide.sh")
	script := `#!/bin/sh
# hide.sh DIR COMMAND...: COMMAND with DIR behind an empty tmpfs
dir=$1; shift
exec unshare --mount --propagation private /bin/sh -c 'mount -t tmpfs -o size=1m,mode=0700 hidden "$0" && exec "$@"' "$dir" "$@"
`
	if err := os.WriteFile(path, []byte(script), 0o700); err != nil {
		t.Fatal(err)
	}
	return path
}

// allowHosts lets ext_admin connect to pg by password from the addresses
// of cidr (initdb allows TCP from the loopback only), and reloads pg.
func allowHosts(t *testing.T, pg *postgres.Instance, cidr string) {
	t.Helper()
	hba, err := os.OpenFile(filepath.Join(pg.DataDir(), "pg_hba.conf"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintln(hba, "host all all "+cidr+" scram-sha-256")
	if err := hba.Close(); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, pg.DSN("ext"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "SELECT pg_reload_conf()"); err != nil {
		t.Fatal(err)
	}
}

// Two workers, each in a network namespace of its own and with the
// coordinator's temporary directory (the server's socket and files, the
// coordinator's, the output) hidden behind an empty file system: they
// reach the coordinator and the server only over their veth pairs. The
// server sees the driver sessions come from the two workers' addresses,
// every statement of both is recorded, and the results are whole.
func TestWorkersInNetworkNamespaces(t *testing.T) {
	needServers(t)
	ns := newNetns(t, 2)
	ns.enter(t)
	hide := hideScript(t)
	tmp := privateTemp(t)
	pg := servertest.PostgresWith(t, map[string]string{"listen_addresses": "'" + ns.addr + "'", "logging_collector": "on"})
	ctx := context.Background()
	externalAdmin(t, pg)
	admin, err := pgx.Connect(ctx, pg.DSN("ext"))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	// The watcher below must not add to the statement log it counts.
	if _, err := admin.Exec(ctx, "SET log_statement = 'none'"); err != nil {
		t.Fatal(err)
	}
	// initdb allows TCP from the loopback only; the workers come from
	// their veth addresses.
	allowHosts(t, pg, "10.213.0.0/16")

	// Where the driver sessions come from, as the server sees them.
	var mu sync.Mutex
	from := map[string]bool{}
	stop := make(chan struct{})
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		for {
			select {
			case <-stop:
				return
			case <-time.After(100 * time.Millisecond):
			}
			rows, err := admin.Query(ctx, "SELECT coalesce(host(client_addr), 'local') FROM pg_stat_activity WHERE application_name = $1", postgres.DriverApplication)
			if err != nil {
				continue
			}
			addrs, _ := pgx.CollectRows(rows, pgx.RowTo[string])
			mu.Lock()
			for _, a := range addrs {
				from[a] = true
			}
			mu.Unlock()
		}
	}()

	dsn := fmt.Sprintf("host=%s port=%d user=ext_admin dbname=ext sslmode=disable password=%s", ns.addr, pg.Port(), secret)
	out := filepath.Join(tmp, "out")
	cmd, log := startObsbench(t, filepath.Join(tmp, "state"), "run", "--dsn", dsn, "--allow-changes",
		"--workers", "2", "--advertise", ns.addr, "--worker-prefix", "ip netns exec "+ns.worker("{index}")+" "+hide+" "+tmp,
		"--observers", "log-statements-file", "--method", "rounds", "--rounds", "2", "--duration", "1s", "--warmup", "500ms",
		"--clients", "2", "--seed", "8", "--out", out)
	err = cmd.Wait()
	close(stop)
	<-watched
	if err != nil {
		t.Fatalf("obsbench: %v\n%s", err, log)
	}
	var got []string
	for a := range from {
		got = append(got, a)
	}
	sort.Strings(got)
	if want := ns.workerAddr(0) + " " + ns.workerAddr(1); strings.Join(got, " ") != want {
		t.Errorf("driver sessions came from %v; want from the workers' addresses %s only\n%s", got, want, log)
	}
	runs := readRuns(t, out)
	if len(runs) != 4 {
		t.Fatalf("%d runs; want 4\n%s", len(runs), log)
	}
	for _, r := range runs {
		d := r.Driver
		if r.Error != "" || len(d.Workers) != 2 || d.Workers[0].Sessions != 1 || d.Workers[1].Sessions != 1 || d.Executed == 0 {
			t.Errorf("run %d (%s): error %q, workers %+v, %d statements; want 2 workers of 1 session each", r.Seq, r.Condition, r.Error, d.Workers, d.Executed)
		}
		if r.Condition == "log-statements-file" && (r.Events == nil || r.Events.Recorded != r.Events.Executed || r.Events.Executed != d.Executed) {
			t.Errorf("run %d: events %+v, executed %d; want every statement of both workers recorded", r.Seq, r.Events, d.Executed)
		}
	}
	t.Logf("driver sessions from %v", got)
}
