package collect_test

import (
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/obsbench/obsbench/internal/collect"
)

// The window counts the CPU of a whole process tree (a shell whose child
// spins) and of this process, and nothing while both idle.
func TestCPUWindow(t *testing.T) {
	tree := exec.Command("sh", "-c", "sh -c 'while :; do :; done' & wait")
	if err := tree.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		exec.Command("pkill", "-P", strconv.Itoa(tree.Process.Pid)).Run()
		tree.Process.Kill()
		tree.Wait()
	}()
	time.Sleep(200 * time.Millisecond) // let the child start

	w, err := collect.StartCPU(tree.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(time.Second)
	for time.Now().Before(deadline) { // spin in this process too
	}
	server, driver, err := w.Stop()
	if err != nil {
		t.Fatal(err)
	}
	// The spinning child had one core at most; on a shared machine it may
	// get less, but never none and never more than the elapsed time.
	if server == nil || server.Seconds < 0.2 || server.Seconds > 1.3 {
		t.Errorf("server CPU = %+v; want 0.2-1.3 s for a child spinning 1 s", server)
	}
	if driver.Seconds < 0.2 || driver.Seconds > 1.5 {
		t.Errorf("driver CPU = %+v; want 0.2-1.5 s for 1 s of spinning", driver)
	}
	if server.Pct <= 0 || server.Pct > 100 {
		t.Errorf("server Pct = %v; want (0, 100]", server.Pct)
	}

	// Only this process, while it sleeps: almost nothing.
	w, err = collect.StartCPU(0)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	server, driver, err = w.Stop()
	if err != nil || server != nil || driver.Seconds > 0.1 {
		t.Errorf("idle window = %+v, %+v, %v; want nil server and ~0 driver", server, driver, err)
	}
	if _, err := collect.StartCPU(1 << 30); err == nil {
		t.Error("StartCPU(no such pid) = nil error")
	}
}
