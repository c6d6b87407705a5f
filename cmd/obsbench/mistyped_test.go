package main

import (
	"slices"
	"testing"
	"time"

	"github.com/obsbench/obsbench/internal/spec"
)

// pgbench's short options of the same meaning become run's long flags in
// each form pgbench takes (-c 8, -c8) and the flag package's (-c=8);
// nothing else is touched: a long flag typed with one dash, a value, what
// follows "--".
func TestExpandShort(t *testing.T) {
	for _, tt := range []struct{ in, want []string }{
		{[]string{"-c", "8"}, []string{"--clients=8"}},
		{[]string{"-c8", "-s4"}, []string{"--clients=8", "--scale=4"}},
		{[]string{"-c=8"}, []string{"--clients=8"}},
		{[]string{"-Mprepared", "-Dx=1", "-R", "500"}, []string{"--query-mode=prepared", "--define=x=1", "--rate=500"}},
		{[]string{"-f", "a.sql@2"}, []string{"--script=a.sql@2"}},
		{[]string{"-L", "5"}, []string{"--latency-limit=5ms"}},
		{[]string{"-L", "5s"}, []string{"--latency-limit=5s"}},
		{[]string{"-count=false", "-seed", "3", "-format", "json", "-scale", "2"}, []string{"-count=false", "-seed", "3", "-format", "json", "-scale", "2"}},
		{[]string{"--c", "8", "-j", "2", "-v"}, []string{"--c", "8", "-j", "2", "-v"}},
		{[]string{"--", "-c", "8"}, []string{"--", "-c", "8"}},
	} {
		if got := expandShort(tt.in); !slices.Equal(got, tt.want) {
			t.Errorf("expandShort(%q) = %q; want %q", tt.in, got, tt.want)
		}
	}
}

// A pgbench user's command line sets what it says.
func TestPgbenchShortFlags(t *testing.T) {
	e := env{}
	s, given, _, err := e.parseRunSpec("obsbench run", []string{"--workload", "pgbench", "-c", "4", "-s3", "-f", "select-only", "-M", "prepared", "-D", "x=1", "-R", "200", "-L", "50"}, nil, spec.Default())
	if err != nil {
		t.Fatal(err)
	}
	if s.Clients != 4 || s.Params["scale"] != 3 || !slices.Equal(s.Script.Files, []string{"select-only"}) || s.Script.QueryMode != "prepared" ||
		!slices.Equal(s.Script.Defines, []string{"x=1"}) || s.Rate != 200 || s.LatencyLimit != 50*time.Millisecond {
		t.Errorf("spec: clients %d, params %v, scripts %q, mode %q, defines %q, rate %g, limit %v", s.Clients, s.Params, s.Script.Files,
			s.Script.QueryMode, s.Script.Defines, s.Rate, s.LatencyLimit)
	}
	for _, name := range []string{"clients", "scale", "script", "query-mode", "define", "rate", "latency-limit"} {
		if !given[name] {
			t.Errorf("--%s not marked given", name)
		}
	}
}
