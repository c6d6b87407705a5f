package server

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// Every server directory's name has the same length (a counted server's
// instructions move with the length of its paths), and a new one each
// time.
func TestMkdirFixedLength(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	name := regexp.MustCompile(`^obsbench-pg-[0-9]{10}$`)
	seen := map[string]bool{}
	for range 50 {
		dir, err := mkdirFixedLength("obsbench-pg-")
		if err != nil {
			t.Fatal(err)
		}
		if filepath.Dir(dir) != os.TempDir() || !name.MatchString(filepath.Base(dir)) || seen[dir] {
			t.Fatalf("directory %s: want a new obsbench-pg- and ten digits in %s", dir, os.TempDir())
		}
		seen[dir] = true
		if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
			t.Fatalf("%s: %v, %v; want a directory of mode 0700", dir, fi.Mode(), err)
		}
	}
}
