package fleet

import (
	"context"
	"errors"
	"io"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/obsbench/obsbench/internal/driver"
	"github.com/obsbench/obsbench/internal/engine"
	"github.com/obsbench/obsbench/internal/engine/enginetest"
	"github.com/obsbench/obsbench/internal/spec"
	"github.com/obsbench/obsbench/internal/workload"
)

// The sessions split into contiguous blocks that cover them once, the
// first workers one more when they do not divide evenly.
func TestShare(t *testing.T) {
	for _, tc := range []struct{ clients, n int }{{6, 3}, {7, 3}, {16, 5}, {3, 3}, {1, 1}, {64, 7}} {
		next := 0
		for i := range tc.n {
			first, count := share(tc.clients, tc.n, i)
			if first != next || count < tc.clients/tc.n || count > tc.clients/tc.n+1 {
				t.Errorf("share(%d, %d, %d) = %d, %d; want from %d, %d or %d", tc.clients, tc.n, i, first, count, next, tc.clients/tc.n, tc.clients/tc.n+1)
			}
			next = first + count
		}
		if next != tc.clients {
			t.Errorf("%d clients over %d workers cover %d", tc.clients, tc.n, next)
		}
	}
}

// A worker's command line: the prefix with {index} replaced wherever it
// stands, then the command, the coordinator's address and the index.
func TestWorkerLine(t *testing.T) {
	cmd := []string{"/usr/bin/obsbench", "worker"}
	for _, tc := range []struct {
		prefix []string
		i      int
		want   string
	}{
		{nil, 0, "/usr/bin/obsbench worker --coordinator 10.0.0.1:7400 --index 0"},
		{[]string{"taskset", "-c", "{index}"}, 3, "taskset -c 3 /usr/bin/obsbench worker --coordinator 10.0.0.1:7400 --index 3"},
		{[]string{"ip", "netns", "exec", "w{index}-{index}"}, 12, "ip netns exec w12-12 /usr/bin/obsbench worker --coordinator 10.0.0.1:7400 --index 12"},
	} {
		if got := strings.Join(workerLine(tc.prefix, cmd, "10.0.0.1:7400", tc.i), " "); got != tc.want {
			t.Errorf("workerLine(%q, %d) = %q; want %q", tc.prefix, tc.i, got, tc.want)
		}
	}
}

// startFleet runs a coordinator and n in-process workers over an
// in-memory server: the protocol's own logic, beside the real-server
// tests of cmd/obsbench.
func startFleet(t *testing.T, ctx context.Context, n int, token string) (*Coordinator, *enginetest.Server, []chan error) {
	t.Helper()
	ln, err := net.Listen("unix", filepath.Join(t.TempDir(), "c.sock"))
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var logs []string
	c := NewCoordinator(ln, Config{Workers: n, Token: "secret", Spec: spec.Spec{Engine: "memory", Workload: "loop"},
		Address: engine.SessionAddress{DSN: "memory"}, Log: func(f string, a ...any) {
			mu.Lock()
			logs = append(logs, f)
			mu.Unlock()
		}})
	t.Cleanup(func() { c.Close() })
	srv := enginetest.New(enginetest.Options{StatementCost: 200 * time.Microsecond, Capacity: 2})
	build := func(s spec.Spec, a engine.SessionAddress, _ map[string][]byte) (workload.Meta, driver.Dialer, error) {
		if s.Workload != "loop" || a.DSN != "memory" {
			return workload.Meta{}, nil, errors.New("not the coordinator's spec")
		}
		return workload.Meta{Name: "loop", New: func() workload.Workload { return workload.Loop("SELECT 1") }}, srv.Dial, nil
	}
	done := make([]chan error, n)
	for i := range n {
		done[i] = make(chan error, 1)
		go func() {
			done[i] <- Work(ctx, WorkerConfig{Coordinator: "unix:" + ln.Addr().String(), Token: token, Index: i, Build: build})
		}()
	}
	return c, srv, done
}

// Three workers run one run's sessions together: the merged result has
// every session, the workers' shares and clocks, the window opened and
// closed once, and the live count saw every statement; at the end the
// workers return without error.
func TestRunOnWorkers(t *testing.T) {
	c, _, done := startFleet(t, context.Background(), 3, "secret")
	ctx := context.Background()
	if err := c.Wait(ctx, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	var opens, closes int
	var live atomic.Int64
	cfg := driver.Config{Clients: 7, Warmup: 200 * time.Millisecond, Duration: time.Second, Executed: &live,
		Window: func(open bool) {
			if open {
				opens++
			} else {
				closes++
			}
		}}
	res, err := c.Run(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res.Clients != 7 || len(res.PerSecond) != 7 || len(res.Workers) != 3 || res.Measured == 0 {
		t.Fatalf("result: %d clients, %d rows, %d workers, %d measured; want 7, 7, 3, some", res.Clients, len(res.PerSecond), len(res.Workers), res.Measured)
	}
	if opens != 1 || closes != 1 {
		t.Errorf("window opened %d and closed %d times; want once each", opens, closes)
	}
	if live.Load() != res.Executed {
		t.Errorf("live count %d; executed %d", live.Load(), res.Executed)
	}
	for i, w := range res.Workers {
		if w.Sessions != []int{3, 2, 2}[i] || w.ClockErrorMS <= 0 || w.ClockErrorMS > 1000 {
			t.Errorf("worker %d: %+v; want %d sessions and a clock error bound", i, w, []int{3, 2, 2}[i])
		}
	}
	// A second run on the same workers.
	if _, err := c.Run(ctx, cfg); err != nil {
		t.Fatalf("second run: %v", err)
	}
	c.Close()
	for i, d := range done {
		if err := <-d; err != nil {
			t.Errorf("worker %d ended with %v; want nil after the coordinator's bye", i, err)
		}
	}
}

// A worker with the wrong token is turned away and the wait names it;
// workers whose coordinator closes without a bye report it lost.
func TestWrongTokenAndLostCoordinator(t *testing.T) {
	c, _, done := startFleet(t, context.Background(), 1, "guess")
	err := c.Wait(context.Background(), time.Second)
	if err == nil || !strings.Contains(err.Error(), "worker 0 did not register within 1s") {
		t.Errorf("wait: %v; want worker 0 not registered", err)
	}
	if err := <-done[0]; err == nil || !strings.Contains(err.Error(), "did not take this worker") {
		t.Errorf("worker with the wrong token: %v", err)
	}

	c2, _, done2 := startFleet(t, context.Background(), 1, "secret")
	if err := c2.Wait(context.Background(), 5*time.Second); err != nil {
		t.Fatal(err)
	}
	c2.ln.Close()
	for _, w := range c2.registered() {
		w.c.close() // gone without a word, as a killed coordinator
	}
	select {
	case err := <-done2[0]:
		if !errors.Is(err, ErrCoordinatorLost) {
			t.Errorf("worker ended with %v; want ErrCoordinatorLost", err)
		}
	case <-time.After(2 * time.Second):
		t.Error("worker still running 2s after its coordinator went")
	}
}

// A worker told to stop (SIGTERM, as when its pod is deleted) leaves at
// once, between runs too, rather than stay registered and fail every run
// it is given.
func TestStoppedWorkerLeaves(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	c, _, done := startFleet(t, ctx, 1, "secret")
	if err := c.Wait(context.Background(), 5*time.Second); err != nil {
		t.Fatal(err)
	}
	cancel()
	select {
	case err := <-done[0]:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("worker ended with %v; want context.Canceled", err)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("worker still registered 2s after it was told to stop")
	}
}

// Over TCP the workers speak TLS to a coordinator whose certificate they
// check against the pin before they send anything: a worker sent to an
// impostor (another certificate) refuses to talk and the impostor reads
// nothing from it, the token included; a worker without a pin refuses
// plain TCP; with the right pin a worker registers.
func TestTLSPinned(t *testing.T) {
	ln, pin, err := ListenTLS("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c := NewCoordinator(ln, Config{Workers: 1, Token: "secret", Spec: spec.Spec{Engine: "memory", Workload: "loop"},
		Address: engine.SessionAddress{DSN: "memory"}})
	defer c.Close()
	impostor, otherPin, err := ListenTLS("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer impostor.Close()
	heard := make(chan []byte, 1)
	go func() {
		conn, err := impostor.Accept()
		if err != nil {
			heard <- nil
			return
		}
		defer conn.Close()
		conn.SetDeadline(time.Now().Add(5 * time.Second))
		b, _ := io.ReadAll(conn)
		heard <- b
	}()
	build := func(spec.Spec, engine.SessionAddress, map[string][]byte) (workload.Meta, driver.Dialer, error) {
		return workload.Meta{Name: "loop", New: func() workload.Workload { return workload.Loop("SELECT 1") }}, enginetest.New(enginetest.Options{}).Dial, nil
	}
	ctx := context.Background()
	err = Work(ctx, WorkerConfig{Coordinator: impostor.Addr().String(), Token: "secret", Pin: pin, Build: build})
	if err == nil || !strings.Contains(err.Error(), "is not the coordinator's") {
		t.Errorf("worker sent to an impostor: %v; want it to refuse the certificate", err)
	}
	if b := <-heard; len(b) != 0 {
		t.Errorf("the impostor read %q from the worker; want nothing", b)
	}
	err = Work(ctx, WorkerConfig{Coordinator: ln.Addr().String(), Token: "secret", Build: build})
	if !errors.Is(err, ErrNotPinned) {
		t.Errorf("worker without a pin: %v; want %v", err, ErrNotPinned)
	}
	done := make(chan error, 1)
	go func() {
		done <- Work(ctx, WorkerConfig{Coordinator: ln.Addr().String(), Token: "secret", Pin: pin, Build: build})
	}()
	if err := c.Wait(ctx, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	c.Close()
	if err := <-done; err != nil {
		t.Errorf("pinned worker: %v", err)
	}
	if len(pin) != 64 || pin == otherPin {
		t.Errorf("pins %q and %q; want two different SHA-256s in hex", pin, otherPin)
	}
	for _, p := range []string{pin, ""} {
		if tok, got := ParseCredential(Credential("abc", p)); tok != "abc" || got != p {
			t.Errorf("credential with pin %q: token %q, pin %q", p, tok, got)
		}
	}
}

// A run's start is named ten round trips ahead of the slowest worker,
// within its bounds: local workers start sooner than maxStartLead.
func TestStartLead(t *testing.T) {
	for _, tt := range []struct {
		clockErrs []time.Duration // half round trips
		want      time.Duration
	}{
		{[]time.Duration{100 * time.Microsecond}, minStartLead},
		{[]time.Duration{time.Millisecond, 4 * time.Millisecond}, 80 * time.Millisecond},
		{[]time.Duration{50 * time.Millisecond}, maxStartLead},
	} {
		r := &run{}
		for _, e := range tt.clockErrs {
			r.ws = append(r.ws, &remote{clockErr: e})
		}
		if got := r.startLead(); got != tt.want {
			t.Errorf("half round trips %v: lead %v; want %v", tt.clockErrs, got, tt.want)
		}
	}
}
