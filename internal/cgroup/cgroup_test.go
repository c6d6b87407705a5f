package cgroup_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/obsbench/obsbench/internal/cgroup"
	"github.com/obsbench/obsbench/internal/collect"
	"github.com/obsbench/obsbench/internal/journal"
)

// hierarchy is the machine's; the project's machines give root a
// writable cpu controller, so its absence fails rather than skips.
func hierarchy(t *testing.T) cgroup.Hierarchy {
	t.Helper()
	h, err := cgroup.Find(cgroup.Root)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// A group holds its quota, takes a process with its children, and gives
// them back to its parent when removed.
func TestGroupHoldsQuotaAndProcesses(t *testing.T) {
	h := hierarchy(t)
	g, err := cgroup.Create(h, fmt.Sprintf("test-%d", os.Getpid()), 0.5)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Remove() })
	if q, err := g.Quota(); err != nil || q != 0.5 {
		t.Errorf("quota %v, %v; want 0.5 CPU", q, err)
	}
	// A shell with a child: both move.
	cmd := exec.Command("sh", "-c", "sleep 30 & wait")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	var tree []int
	for len(tree) < 2 {
		tree = collect.Descendants(cmd.Process.Pid)
	}
	if err := g.Add(cmd.Process.Pid); err != nil {
		t.Fatal(err)
	}
	procs, err := g.Procs()
	if err != nil || !slices.Contains(procs, tree[0]) || !slices.Contains(procs, tree[1]) {
		t.Errorf("group holds %v, %v; want the shell and its sleep %v", procs, err, tree)
	}
	if _, err := g.Throttled(); err != nil {
		t.Errorf("throttled time: %v", err)
	}
	if _, err := g.Usage(); err != nil {
		t.Errorf("CPU used: %v", err)
	}
	if err := g.Remove(); err != nil {
		t.Fatal(err)
	}
	for _, dir := range cgroup.Paths(h, fmt.Sprintf("test-%d", os.Getpid())) {
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Errorf("%s still there", dir)
		}
	}
	if cmd.ProcessState != nil {
		t.Error("the shell ended with its group")
	}
	if err := cgroup.Remove(g.Dir()); err != nil {
		t.Errorf("removing a group already gone: %v", err)
	}
	if err := cgroup.Remove(filepath.Join(h.Dir, "system.slice")); err == nil {
		t.Error("Remove took a group obsbench did not make")
	}
}

// A set journals each group before making it: Close removes the groups
// and the journal; a set never closed (obsbench killed) leaves a journal
// whose records Undo removes.
func TestSetJournalsGroups(t *testing.T) {
	h := hierarchy(t)
	dir := t.TempDir()
	s, err := cgroup.NewSet(dir)
	if err != nil {
		t.Fatal(err)
	}
	g, err := s.Create(h, fmt.Sprintf("test-%d-a", os.Getpid()), 1)
	if err != nil {
		t.Fatal(err)
	}
	paths, _ := journal.List(dir)
	if len(paths) != 1 {
		t.Fatalf("journals %v; want one", paths)
	}
	_, pending, err := journal.Read(paths[0])
	if err != nil || len(pending) != 1 {
		t.Fatalf("journal: %d pending, %v; want the group", len(pending), err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(g.Dir()); !os.IsNotExist(err) {
		t.Errorf("%s still there after Close", g.Dir())
	}
	if left, _ := journal.List(dir); len(left) > 0 {
		t.Errorf("journal left after Close: %v", left)
	}

	// Killed: the journal stays, Undo removes what it names.
	s, err = cgroup.NewSet(dir)
	if err != nil {
		t.Fatal(err)
	}
	g, err = s.Create(h, fmt.Sprintf("test-%d-b", os.Getpid()), 1)
	if err != nil {
		t.Fatal(err)
	}
	paths, _ = journal.List(dir)
	_, pending, _ = journal.Read(paths[0])
	raws := []json.RawMessage{pending[0].Change}
	if err := cgroup.Undo(raws); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(g.Dir()); !os.IsNotExist(err) {
		t.Errorf("%s still there after Undo", g.Dir())
	}
	if err := cgroup.Undo([]json.RawMessage{[]byte(`{"engine":"postgres"}`)}); err == nil {
		t.Error("Undo took another engine's record")
	}
	s.Close()
}

// A machine without a cpu controller says so.
func TestFindWithoutController(t *testing.T) {
	_, err := cgroup.Find(t.TempDir())
	var ue *cgroup.UnavailableError
	if !errors.As(err, &ue) {
		t.Fatalf("Find on an empty root: %v; want an UnavailableError", err)
	}
}

// A group whose process keeps forking (a server left running after a
// kill -9 of obsbench starts backends and workers) is still removed: the
// children forked while the parent was being moved are moved too.
func TestRemoveWhileForking(t *testing.T) {
	h := hierarchy(t)
	name := fmt.Sprintf("test-fork-%d", os.Getpid())
	for i := 0; i < 20; i++ {
		g, err := cgroup.Create(h, name, 0.5)
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command("sh", "-c", "while :; do sleep 0.001 & done")
		if err := cmd.Start(); err != nil {
			g.Remove()
			t.Fatal(err)
		}
		if err := g.Add(cmd.Process.Pid); err != nil {
			t.Error(err)
		}
		err = g.Remove()
		cmd.Process.Kill()
		cmd.Wait()
		if err != nil {
			t.Fatalf("try %d: %v", i, err)
		}
	}
}
