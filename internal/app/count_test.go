package app

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/obsbench/obsbench/internal/spec"
)

// A timed run counts after its timed runs where it can; where it cannot,
// the default leaves counting out with the reason the table will print,
// and --count given is refused with the same reason.
func TestCountAfterWhereItCan(t *testing.T) {
	_, valgrind := exec.LookPath("valgrind")
	for _, tt := range []struct {
		name    string
		edit    func(s *Experiment)
		noPath  bool // valgrind is not on PATH
		counts  bool
		missing string
	}{
		{name: "managed postgres", edit: func(*Experiment) {}, counts: valgrind == nil},
		{name: "managed mariadb", edit: func(c *Experiment) { c.Engine, c.Observers = "mariadb", []string{"general-log-file"} }, counts: valgrind == nil},
		{name: "no valgrind", edit: func(*Experiment) {}, noPath: true, missing: "valgrind is not installed (apt-get install valgrind)"},
		{name: "external", edit: func(c *Experiment) { c.DSN = "postgres://x@127.0.0.1:1/db" }, missing: "obsbench counts only a server it starts, not one given by --dsn"},
		{name: "standby", edit: func(c *Experiment) { c.Standby = "async" }, missing: "counting runs one server, not a primary and its --standby"},
		{name: "sweep", edit: func(c *Experiment) { c.Sessions = []int{1, 2} }, missing: ""},
		{name: "off", edit: func(c *Experiment) { c.Count.After = false }, missing: ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if tt.noPath {
				t.Setenv("PATH", t.TempDir())
			}
			s := spec.Default()
			s.Method, s.Observers, s.AllowChanges = "rounds", []string{"log-statements-file"}, true
			s.Out = filepath.Join(t.TempDir(), "out")
			c := Experiment{Spec: s}
			tt.edit(&c)
			got, err := Resolve(chosen(c.Spec, "method", "observers", "allow-changes"))
			if err != nil {
				t.Fatalf("Resolve: %v", err)
			}
			if got.counting != tt.counts || got.countMissing != tt.missing {
				t.Errorf("counting %v, missing %q; want %v, %q", got.counting, got.countMissing, tt.counts, tt.missing)
			}
			if !got.Count.After && tt.name != "off" {
				t.Errorf("the spec's --count changed to off: experiment.json would not record it as given")
			}
			if tt.missing == "" {
				return
			}
			_, err = Resolve(chosen(c.Spec, "method", "observers", "allow-changes", "count"))
			if err == nil || !strings.Contains(err.Error(), "--count: "+tt.missing) {
				t.Errorf("with --count given: %v; want it refused, saying %q", err, tt.missing)
			}
		})
	}
}
