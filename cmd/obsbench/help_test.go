package main

import (
	"bytes"
	"context"
	"flag"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/obsbench/obsbench/internal/spec"
)

// Help goes to standard output with exit 0, shows what a command takes
// (a study's own flags and defaults too), and flags may follow a
// positional argument or come before it.
func TestHelpAndFlagForms(t *testing.T) {
	recorded := filepath.Join("..", "..", "internal", "report", "testdata", "run-mariadb")
	for _, tt := range []struct {
		args []string
		code int
		out  []string // in standard output
		err  string   // in standard error
	}{
		{[]string{"run", "-h"}, exitOK, []string{"usage: obsbench run", "--alt-duration", "--counters=false turns it off"}, ""},
		{[]string{"help", "run"}, exitOK, []string{"usage: obsbench run", "Examples:", "Method and time:\n  --method"}, ""},
		{[]string{"report", "--help"}, exitOK, []string{"usage: obsbench report [--format FORMAT] DIR", "--format"}, ""},
		{[]string{"help", "study"}, exitOK, []string{"usage: obsbench study <name>"}, ""},
		{[]string{"study", "audit", "-h"}, exitOK, []string{"usage: obsbench study audit", "Is the audit trail complete", "--sessions", "1,2,4,8,16,32",
			"--method", "alternation", "--reliability-duration", "default 10m0s", "--threshold", "default 5", "--workloads"}, ""},
		{[]string{"study", "replay", "-h"}, exitOK, []string{"--capture-duration", "default 1m0s", "--capture\n"}, ""},
		{[]string{"study", "targets", "-h"}, exitOK, []string{"--rounds", "20", "--blocks", "--method", "duet"}, ""},
		{[]string{"run", "--dry-run", "--method", "duet"}, exitOK, []string{"dry run: nothing is started", "method duet\n",
			"5 arms (the A/A and each observer) x 16 phases = 80 phases of 500ms warm-up + 2s measured", "estimate: about 6m0s"}, ""},
		{[]string{"run", "--dry-run", "--method", "rounds", "--observers", "pg-stat-statements", "--rounds", "4"}, exitOK,
			[]string{"2 conditions (the baseline and each observer) x 4 rounds = 8 runs of 2s warm-up + 8s measured", "estimate: about 2m0s"}, ""},
		{[]string{"run", "--dry-run", "--method", "instructions", "--observers", "pg-stat-statements"}, exitOK,
			[]string{"workload credit-top1, dataset credit\n", "2 conditions x 8 rounds = 16 runs of 100 statements after 20, the server under valgrind", "estimate: about 2m0s (the counted runs"}, ""},
		{[]string{"study", "targets", "--dry-run", "--method", "instructions"}, exitOK,
			[]string{"19 conditions x 8 rounds = 152 runs of 101 statements after 0, the dataset shrunk to 1/10 of its rows", "estimate: none: a counted run's time depends on the mix's statements"}, ""},
		{[]string{"study", "replay", "--dry-run"}, exitOK, []string{"dry run: nothing is started",
			"study replay: first a capture, workload dss-mix with 8 sessions for 1m0s on a managed postgres server", "a dry run does not make"}, ""},
		{[]string{"run", "--dry-run", "--method", "rounds", "--workers", "2", "--rate", "500"}, exitOK,
			[]string{"workload credit-top1, 16 clients in 2 worker processes, dataset credit\n", "at a fixed rate of 500 units/s"}, ""},
		{[]string{"--version"}, exitOK, []string{"obsbench "}, ""},
		{[]string{"observers", "-v"}, exitOK, []string{"needs a restart: preload pg_stat_statements\n",
			"--method auto: whole in rounds, and its switchable part (pg_stat_statements.track) by alternation with preload pg_stat_statements pg_stat_statements.track=none extension pg_stat_statements in force on both sides",
			"on --dsn: only where logging_collector=on is already in force", "on --dsn: no (its sink"}, ""},
		{[]string{"observers", "-v", "--engine", "mariadb"}, exitOK, []string{"needs a restart: performance_schema=ON\n",
			"--method auto: whole, in rounds (no reload switches it)", "with plugin server_audit in force on both sides", "on --dsn: yes"}, ""},
		{[]string{"report", "--format", "csv", recorded}, exitOK, []string{"condition,method,stmts_per_s"}, ""},
		{[]string{"report", recorded, "--format", "csv"}, exitOK, []string{"condition,method,stmts_per_s"}, ""},
		{[]string{"report", recorded, recorded}, exitUsage, nil, "one results directory at a time"},
		{[]string{"run", "--counters", "false"}, exitUsage, nil, "--counters takes its value after '=': --counters=false"},
		{[]string{"study", "audit", "--clients", "0"}, exitUsage, nil, "--clients 0: study audit sweeps the session count (--sessions 1,2,4,8,16,32)"},
	} {
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), tt.args, &stdout, &stderr)
		if code != tt.code {
			t.Errorf("%v: exit %d; want %d\n%s%s", tt.args, code, tt.code, stdout.String(), stderr.String())
			continue
		}
		for _, want := range tt.out {
			if !strings.Contains(stdout.String(), want) {
				t.Errorf("%v: standard output lacks %q:\n%s", tt.args, want, stdout.String())
			}
		}
		if tt.err == "" && stderr.Len() > 0 {
			t.Errorf("%v: standard error %q; want nothing", tt.args, stderr.String())
		}
		if !strings.Contains(stderr.String(), tt.err) {
			t.Errorf("%v: standard error %q; want %q", tt.args, stderr.String(), tt.err)
		}
	}
}

// Each command's help is what testdata/help/COMMAND.txt holds (go test
// -update rewrites them), and every flag of run is in one of its groups.
func TestHelpGolden(t *testing.T) {
	for name := range helps {
		var stdout, stderr bytes.Buffer
		if code := run(context.Background(), []string{"help", name}, &stdout, &stderr); code != exitOK {
			t.Errorf("help %s: exit %d\n%s", name, code, stderr.String())
			continue
		}
		got := stdout.String()
		if !strings.HasPrefix(got, "usage: obsbench "+name) || !strings.Contains(got, strings.Join(wrap(helps[name].summary, 76), "\n")) {
			t.Errorf("help %s does not start with its usage and what it does:\n%s", name, got)
		}
		if name == "run" && strings.Contains(got, "Other flags:") {
			t.Errorf("help run has flags in no group:\n%s", got[strings.Index(got, "Other flags:"):])
		}
		path := filepath.Join("testdata", "help", name+".txt")
		if *updateDocs {
			if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (go test -run TestHelpGolden -update writes it)", err)
		}
		if got != string(want) {
			t.Errorf("help %s differs from %s (go test -run TestHelpGolden -update rewrites it):\n%s", name, path, got)
		}
	}
}

// User docs, help and messages carry no dated run notes: a date, "the
// latest run", "earlier that day" belong in the bench RESULT.md files
// the docs link to.
func TestNoDatedNotes(t *testing.T) {
	root := filepath.Join("..", "..")
	files, _ := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	studies, _ := filepath.Glob(filepath.Join(root, "docs", "studies", "*.md"))
	files = append(files, studies...)
	help, _ := filepath.Glob(filepath.Join("testdata", "help", "*.txt"))
	files = append(append(files, filepath.Join(root, "README.md")), help...)
	// "here" means this project's machine to its authors and the
	// reader's to them: say which.
	notes := `latest run|earlier that day|in the one before|\bhere\b`
	dated := regexp.MustCompile(`(?i)\b20\d\d-\d\d-\d\d\b|` + notes)
	var sources []string
	for _, dir := range []string{filepath.Join(root, "cmd"), filepath.Join(root, "internal")} {
		filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err == nil && strings.HasSuffix(path, ".tmpl") {
				files = append(files, path) // the HTML report's text
			}
			if err == nil && strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, "_test.go") {
				sources = append(sources, path)
			}
			return err
		})
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(b), "\n") {
			if m := dated.FindString(line); m != "" {
				t.Errorf("%s:%d: %q: a dated run note or a \"here\" (%q)", f, i+1, line, m)
			}
		}
	}
	// The messages: every string in the code a user may read (errors,
	// warnings, progress, report text); dates there are time formats.
	noted := regexp.MustCompile(`(?i)` + notes)
	fset := token.NewFileSet()
	for _, path := range sources {
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
				if m := noted.FindString(lit.Value); m != "" {
					t.Errorf("%s: %s: a dated run note or a \"here\" (%q)", fset.Position(lit.Pos()), lit.Value, m)
				}
			}
			return true
		})
	}
}

// Each flag's help gives its default once: in one "(default ...)", which
// every flag of run with a value by default has, and never a second
// value beside it (as --rounds once said "default 16" for a duet before
// "(default 6)").
func TestHelpOneDefault(t *testing.T) {
	value := regexp.MustCompile(`default:? [0-9]`)
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	runFlags(fs, new(spec.Default()))
	for name := range helps {
		var stdout, stderr bytes.Buffer
		run(context.Background(), []string{"help", name}, &stdout, &stderr)
		for _, block := range flagBlocks(stdout.String()) {
			text := strings.Join(strings.Fields(block.text), " ")
			n, values := strings.Count(text, "(default"), len(value.FindAllString(text, -1))
			f := fs.Lookup(strings.TrimLeft(block.flag, "-"))
			valued := name == "run" && f != nil && !zeroDefault(f.DefValue)
			if n > 1 || values > 1 || (valued && n != 1) {
				t.Errorf("%s %s: %d '(default' and %d default values; want one default, said once:\n%s", name, block.flag, n, values, text)
			}
		}
	}
}

// flagBlock is one flag's lines of a command's help.
type flagBlock struct{ flag, text string }

// flagBlocks splits a command's help into its flags' blocks: a line
// "  --name kind" and the indented usage lines under it.
func flagBlocks(help string) []flagBlock {
	var out []flagBlock
	for _, line := range strings.Split(help, "\n") {
		switch {
		case strings.HasPrefix(line, "  -") && !strings.HasPrefix(line, "   "):
			f := strings.Fields(line)
			out = append(out, flagBlock{flag: f[0]})
		case strings.HasPrefix(line, "        ") && len(out) > 0:
			out[len(out)-1].text += " " + line
		}
	}
	return out
}
