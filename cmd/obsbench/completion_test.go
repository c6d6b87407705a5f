package main

import (
	"bytes"
	"context"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/obsbench/obsbench/internal/spec"
)

// Each shell's completion script, run in that shell, completes commands,
// flags, study names and the values of the flags that take names; and
// `obsbench run -` offers every flag run has.
func TestCompletionInEachShell(t *testing.T) {
	if testing.Short() {
		t.Skip("runs bash, zsh and fish: second tier, not run with -short (which needs no packages)")
	}
	cases := []struct {
		words     string
		want, not []string
	}{
		{"obsbench ru", []string{"run"}, []string{"study"}},
		{"obsbench run --obs", []string{"--observers", "--observer-file"}, []string{"--rounds"}},
		{"obsbench run --observers pg-stat-s", []string{"pg-stat-statements", "pg-stat-statements-planning"}, []string{"pgaudit-read"}},
		{"obsbench run --observers log-statements-file,pgaudit-r", []string{"log-statements-file,pgaudit-read", "log-statements-file,pgaudit-rotated"}, []string{"pgaudit-read"}},
		{"obsbench run --engine m", []string{"mariadb"}, []string{"postgres"}},
		{"obsbench report --format ht", []string{"html"}, nil},
		{"obsbench run --format m", []string{"markdown"}, []string{"html"}},
		{"obsbench study ta", []string{"targets"}, []string{"audit"}},
		{"obsbench study audit --reli", []string{"--reliability-duration"}, nil},
		{"obsbench completion f", []string{"fish"}, nil},
	}
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	runFlags(fs, &spec.Spec{})
	var runAll []string
	fs.VisitAll(func(f *flag.Flag) {
		if len(f.Name) == 1 {
			runAll = append(runAll, "-"+f.Name)
		} else {
			runAll = append(runAll, "--"+f.Name)
		}
	})
	cases = append(cases, struct {
		words     string
		want, not []string
	}{"obsbench run -", runAll, nil})

	for _, shell := range []string{"bash", "zsh", "fish"} {
		t.Run(shell, func(t *testing.T) {
			bin, err := exec.LookPath(shell)
			if err != nil {
				t.Fatalf("%s not found (make test installs it): %v", shell, err)
			}
			var script, stderr bytes.Buffer
			if code := run(context.Background(), []string{"completion", shell}, &script, &stderr); code != exitOK {
				t.Fatalf("completion %s: exit %d: %s", shell, code, stderr.String())
			}
			path := filepath.Join(t.TempDir(), "obsbench."+shell)
			if err := os.WriteFile(path, script.Bytes(), 0o600); err != nil {
				t.Fatal(err)
			}
			for _, c := range cases {
				got := complete(t, bin, shell, path, c.words)
				for _, w := range c.want {
					if !slices.Contains(got, w) {
						t.Errorf("%s: %q completes to %q; want %q among them", shell, c.words, got, w)
					}
				}
				for _, w := range c.not {
					if slices.Contains(got, w) {
						t.Errorf("%s: %q completes to %q; want no %q", shell, c.words, got, w)
					}
				}
			}
		})
	}
}

// complete asks shell, with the completion script at path loaded, what
// the command line words completes to, as the shell would offer it.
func complete(t *testing.T, bin, shell, path, words string) []string {
	t.Helper()
	var cmd *exec.Cmd
	switch shell {
	case "fish":
		// complete -C prints what the shell would offer for a command line.
		cmd = exec.Command(bin, "--no-config", "-c", "source "+path+"; complete -C "+fishQuote(words))
	case "bash":
		cmd = exec.Command(bin, "--norc", "--noprofile", "-c", `source "$1"; shift
COMP_WORDS=("$@"); COMP_CWORD=$(( $# - 1 )); _obsbench; printf '%s\n' "${COMPREPLY[@]}"`, "bash", path)
		cmd.Args = append(cmd.Args, strings.Fields(words)...)
	case "zsh":
		// zsh calls a bash completion function as _bash_complete does:
		// in sh emulation (arrays from 0), and matches what it returns
		// against the word being completed itself.
		cmd = exec.Command(bin, "-f", "-c", `source "$1"; shift
try() { emulate -L sh; COMP_WORDS=("$@"); COMP_CWORD=$(( $# - 1 )); _obsbench; printf "%s\n" "${COMPREPLY[@]}"; }
try "$@"`, "zsh", path)
		cmd.Args = append(cmd.Args, strings.Fields(words)...)
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: completing %q: %v\n%s", shell, words, err, out)
	}
	f := strings.Fields(words)
	last := f[len(f)-1]
	if strings.HasSuffix(words, " ") {
		last = ""
	}
	var got []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		w, _, _ := strings.Cut(line, "\t") // fish: the description
		if shell == "zsh" && !strings.HasPrefix(w, last) {
			continue
		}
		got = append(got, w)
	}
	return got
}
