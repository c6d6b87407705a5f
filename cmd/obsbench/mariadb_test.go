package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/obsbench/obsbench/internal/engine/servertest"
	"github.com/obsbench/obsbench/internal/result"
)

// obsbench run --engine mariadb on a managed server, end to end: an
// observer measured whole by rounds and its switchable part by
// alternation (server_audit), one by rounds with a restart
// (performance_schema), waits and counters collected, events
// counted, nothing left behind.
//
// No --method is given and no cgroup can hold a twin's share here, so the
// run falls back from the default duet to auto and says why.
func TestRunMariaDBEndToEnd(t *testing.T) {
	needServers(t)
	tmp := privateTemp(t)
	out := filepath.Join(tmp, "out")
	var outBuf, errBuf bytes.Buffer
	e := testEnv(&outBuf, &errBuf)
	e.CgroupRoot = filepath.Join(tmp, "no-cgroups")
	if code := e.run(context.Background(), []string{"run", "--engine", "mariadb", "--rounds", "2", "--duration", "1s", "--warmup", "300ms",
		"--alt-duration", "10s", "--clients", "2", "--observers", "server-audit-file,perf-schema", "--waits", "10ms", "--seed", "7", "--out", out}); code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, outBuf.String(), errBuf.String())
	}
	stdout, stderr := outBuf.String(), errBuf.String()
	if want := "method auto, not duet: no usable cgroup"; !strings.Contains(stderr, want) {
		t.Errorf("stderr lacks %q:\n%s", want, stderr)
	}
	s, err := readSummary(t, filepath.Join(out, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	// baseline, the A/A arm of alternation, server_audit whole (its
	// plugin is installed for the run) and its switchable part, and
	// performance_schema whole.
	if s.Engine != "mariadb" || !strings.HasPrefix(s.Server, "10.") || len(s.Conditions) != 5 {
		t.Fatalf("summary: engine %q, server %q, %d conditions; want mariadb 10.x and 5", s.Engine, s.Server, len(s.Conditions))
	}
	byName := map[string]result.ConditionSummary{}
	for _, c := range s.Conditions {
		byName[c.Name] = c
		if c.Waits == nil || c.Waits.Samples == 0 {
			t.Errorf("%s: no wait samples", c.Name)
		}
		if c.Counters["questions"] <= 0 || c.Counters["com_stmt_execute"] <= 0 {
			t.Errorf("%s: counters %v; want statements per second", c.Name, c.Counters)
		}
	}
	audit, part, ps := byName["server-audit-file"], byName["server-audit-file (switchable)"], byName["perf-schema"]
	if !strings.HasPrefix(audit.Method, "rounds") || !strings.HasPrefix(part.Method, "alternation") || !strings.HasPrefix(ps.Method, "rounds") {
		t.Errorf("methods %s, %s, %s; want rounds for server_audit whole and performance_schema, alternation for server_audit's switchable part", audit.Method, part.Method, ps.Method)
	}
	if audit.Measures != result.MeasuresWhole || part.Measures != result.MeasuresSwitchable || part.Window != result.WindowOnPhases || part.Reference == nil {
		t.Errorf("server_audit measures %q / %q over %q, reference %+v", audit.Measures, part.Measures, part.Window, part.Reference)
	}
	for _, c := range []result.ConditionSummary{audit, part, ps} {
		if ev := c.Events; ev == nil || ev.Recorded != ev.Executed || ev.Recorded == 0 || ev.EngineLost == nil || *ev.EngineLost != 0 {
			t.Errorf("%s events = %+v; want recorded = executed > 0 and the engine's lost counter at 0", c.Name, ev)
		}
	}
	if len(ps.Waits.Engine) == 0 || len(byName["baseline"].Waits.Engine) != 0 {
		t.Errorf("performance_schema waits: %v under perf-schema, %v in the baseline; want them only where it is on", ps.Waits.Engine, byName["baseline"].Waits.Engine)
	}
	wantPrinted(t, stdout, "mariadb 10.", "server-audit-file", "not collected (performance_schema is off on this server", "performance_schema wait time")
	if d, _ := filepath.Glob(filepath.Join(tmp, "obsbench-mariadb-*")); len(d) > 0 {
		t.Errorf("server directories left: %v", d)
	}
}

func TestInspectMariaDB(t *testing.T) {
	needServers(t)
	m := servertest.MariaDB(t, nil)
	var stdout, stderr bytes.Buffer
	dsn := "root:" + m.Password() + "@unix(" + m.Socket() + ")/"
	if code := run(context.Background(), []string{"inspect", "--engine", "mariadb", "--dsn", dsn}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	for _, want := range []string{"observers on mariadb 10.", "catalog observers in force:\n  none", "performance_schema is off", "lost-event counters above zero:\n  none"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("inspect output lacks %q:\n%s", want, stdout.String())
		}
	}
}

// Study 4 on MariaDB, short: with a semi-synchronous replica the
// autocommit baseline waits for the replica's acknowledgement, and with
// semi-sync off it does not. Runs of 2 s: in 1 s a suite that starves
// the machine once left a condition's sampler without a single sample.
func TestStudySyncCommitMariaDB(t *testing.T) {
	needServers(t)
	tmp := privateTemp(t)
	out := filepath.Join(tmp, "out")
	// At a fixed rate, as a study takes one: every commit still waits for
	// the replica's acknowledgement.
	stdout, _ := runOK(t, "study", "sync-commit", "--engine", "mariadb", "--observers", "semi-sync-off", "--rounds", "2",
		"--duration", "2s", "--warmup", "300ms", "--batch", "10", "--rate", "300", "--seed", "6", "--out", out)
	s, err := readSummary(t, filepath.Join(out, "inserts-autocommit", "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range s.Conditions {
		if c.Rate == nil || c.Rate.AskedPerS != 300 {
			t.Errorf("%s: rate %+v; want the study's runs at 300 a second", c.Name, c.Rate)
		}
	}
	const ack = "State:Waiting for semi-sync ACK from slave"
	share := map[string]float64{}
	for _, c := range s.Conditions {
		if c.Waits == nil {
			t.Fatalf("%s: no waits sampled", c.Name)
		}
		for _, w := range c.Waits.Top {
			if w.Wait == ack {
				share[c.Name] = w.Pct
			}
		}
	}
	if share["baseline"] <= 0 || share["semi-sync-off"] != 0 {
		t.Errorf("share of %q: baseline %.1f%%, semi-sync-off %.1f%%; want some, then none", ack, share["baseline"], share["semi-sync-off"])
	}
	if !strings.Contains(stdout, "wait for semi-sync ACK from slave %") {
		t.Errorf("stdout lacks the study's table:\n%s", stdout)
	}
	noServersLeft(t, tmp)
}
