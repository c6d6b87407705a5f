package engine

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A marker is found only beyond the offset, also when a write cuts it in
// two between searches, and a file searched once is read on from where
// the last search ended.
func TestFinder(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log")
	write := func(s string) {
		t.Helper()
		f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := f.WriteString(s); err != nil {
			t.Fatal(err)
		}
	}
	find := func(f *LogFinder, offset int64) bool {
		t.Helper()
		found, err := f.Find(path, offset)
		if err != nil {
			t.Fatal(err)
		}
		return found
	}
	write("LOG: MARK from before the run\n")
	start := int64(len("LOG: MARK from before the run\n"))
	f := &LogFinder{Marker: []byte("MARK")}
	if find(f, start) {
		t.Fatal("found the marker before the offset")
	}
	write("LOG: plan 1\nLOG: MA")
	if find(f, start) {
		t.Fatal("found half a marker")
	}
	write("RK\n")
	if !find(f, start) {
		t.Fatal("missed a marker written in two parts")
	}
	if f.seen[path] <= start {
		t.Errorf("searched up to %d; want past the offset %d", f.seen[path], start)
	}

	// A marker across the boundary of the blocks one search reads.
	path = filepath.Join(t.TempDir(), "big")
	write(strings.Repeat("x", 1<<20+1) + "MARK\n") // a read holds 1 MiB and 3 bytes
	if !find(&LogFinder{Marker: []byte("MARK")}, 0) {
		t.Error("missed a marker across two blocks of a read")
	}
	if found, err := (&LogFinder{Marker: []byte("MARK")}).Find(filepath.Join(t.TempDir(), "gone"), 0); found || err != nil {
		t.Errorf("a missing file: %v, %v; want not found, no error", found, err)
	}
}
