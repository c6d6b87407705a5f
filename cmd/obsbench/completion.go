package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"

	"github.com/obsbench/obsbench/internal/engine"
	"github.com/obsbench/obsbench/internal/observer"
	"github.com/obsbench/obsbench/internal/report"
	"github.com/obsbench/obsbench/internal/result"
	"github.com/obsbench/obsbench/internal/spec"
	"github.com/obsbench/obsbench/internal/study"
	"github.com/obsbench/obsbench/internal/workload"
)

// completionCmd prints a shell's completion script: the commands, each
// command's flags, the study names, and the values of the flags that take
// a name. The words come from the commands' own help, so a flag added to
// a command completes without touching this file.
func completionCmd(ctx context.Context, args []string, e env) error {
	stdout := e.stdout
	fs := commandFlags("completion")
	fs.SetOutput(stdout)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return errHelp
		}
		return usageError{Err: err}
	}
	if fs.NArg() != 1 {
		return usagef("name a shell: obsbench completion bash|zsh|fish")
	}
	if shell := fs.Arg(0); shell != "bash" && shell != "zsh" && shell != "fish" {
		return usagef("completion %q: want bash, zsh or fish", shell)
	}
	words, err := completionWords(ctx, e)
	if err != nil {
		return err
	}
	switch fs.Arg(0) {
	case "bash":
		return bashCompletion(stdout, words)
	case "zsh":
		// zsh runs bash's completion functions through bashcompinit.
		fmt.Fprintln(stdout, "autoload -U +X compinit && compinit")
		fmt.Fprintln(stdout, "autoload -U +X bashcompinit && bashcompinit")
		return bashCompletion(stdout, words)
	default:
		return fishCompletion(stdout, words)
	}
}

// flagWord is a flag as completion offers it: its spelling as the help
// prints it (--name, or -v) and the first line of what it does.
type flagWord struct {
	name, what string
}

// completions is what a completion script offers.
type completions struct {
	commands []string
	flags    map[string][]flagWord // by command; "study" is study NAME's
	studies  []string
	values   map[string][]string // by flag name without dashes, or COMMAND/NAME
}

// completionWords reads the commands from the top-level usage and each
// command's flags from its help (obsbench CMD -h).
func completionWords(ctx context.Context, e env) (completions, error) {
	c := completions{flags: map[string][]flagWord{}, values: map[string][]string{}}
	c.commands = commandNames()
	help := func(args ...string) ([]flagWord, error) {
		var out bytes.Buffer
		e.stdout, e.stderr = &out, &out
		if code := e.run(ctx, args); code != exitOK {
			return nil, fmt.Errorf("completion: obsbench %s exited %d:\n%s", strings.Join(args, " "), code, out.String())
		}
		return helpFlags(out.String()), nil
	}
	for _, cmd := range c.commands {
		if cmd == "version" || cmd == "help" || cmd == "completion" || cmd == "study" {
			continue
		}
		f, err := help(cmd, "-h")
		if err != nil {
			return c, err
		}
		c.flags[cmd] = f
	}
	// A study takes every run flag and its own (study NAME -h).
	var names []string
	for _, e := range engine.Names() {
		names = append(names, study.Names(e)...)
	}
	c.studies = append([]string{"list"}, sortedSet(names)...)
	c.flags["study"] = slices.Clone(c.flags["run"]) // appended to below
	for _, name := range c.studies[1:] {
		own, err := help("study", name, "-h")
		if err != nil {
			return c, err
		}
		for _, f := range own {
			if f.what != "" && !slices.ContainsFunc(c.flags["study"], func(g flagWord) bool { return g.name == f.name }) {
				c.flags["study"] = append(c.flags["study"], f)
			}
		}
	}
	cat, err := observer.Builtin()
	if err != nil {
		return c, err
	}
	var observers []string
	for _, e := range engine.Names() {
		for _, o := range cat.All(e) {
			observers = append(observers, o.Name)
		}
	}
	c.values["observers"] = sortedSet(append(observers, "baseline"))
	c.values["engine"] = engine.Names()
	c.values["method"] = spec.Names(result.Methods)
	c.values["format"] = spec.Names(report.Formats)
	c.values["report/format"] = spec.Names(append([]spec.Format{spec.FormatHTML}, report.Formats...))
	c.values["workload"] = append(workload.Names(), "replay", "pgbench", "sql")
	return c, nil
}

// helpFlags are the flags a command's help lists: lines "  --name TYPE"
// (or "  -v"), each with its description indented on the next line; a
// study's help also lists the run flags it sets ("  --engine  postgres"),
// which have none.
func helpFlags(help string) []flagWord {
	var out []flagWord
	lines := strings.Split(help, "\n")
	for i, line := range lines {
		if !strings.HasPrefix(line, "  -") {
			continue
		}
		f := flagWord{name: strings.Fields(line)[0]}
		if i+1 < len(lines) && strings.HasPrefix(lines[i+1], "    ") {
			f.what, _, _ = strings.Cut(strings.TrimSpace(lines[i+1]), " (")
		}
		out = append(out, f)
	}
	return out
}

func sortedSet(s []string) []string {
	sort.Strings(s)
	return slices.Compact(s)
}

func bashCompletion(w io.Writer, c completions) error {
	var b strings.Builder
	b.WriteString("# obsbench completion for bash: source <(obsbench completion bash)\n")
	b.WriteString("_obsbench() {\n")
	b.WriteString("  local cur=\"${COMP_WORDS[COMP_CWORD]}\" prev=\"${COMP_WORDS[COMP_CWORD-1]}\" cmd=\"${COMP_WORDS[1]}\" words\n")
	fmt.Fprintf(&b, "  if [[ $COMP_CWORD -eq 1 ]]; then\n    COMPREPLY=($(compgen -W %q -- \"$cur\"))\n    return\n  fi\n", strings.Join(c.commands, " "))
	b.WriteString("  case \"$cmd $prev\" in\n")
	for _, key := range sortedKeys(c.values) {
		if cmd, flag, ok := strings.Cut(key, "/"); ok {
			fmt.Fprintf(&b, "  \"%s --%s\"|\"%s -%s\")\n    COMPREPLY=($(compgen -W %q -- \"$cur\"))\n    return ;;\n", cmd, flag, cmd, flag, strings.Join(c.values[key], " "))
		}
	}
	b.WriteString("  esac\n")
	b.WriteString("  case \"$prev\" in\n")
	for _, flag := range sortedKeys(c.values) {
		if strings.Contains(flag, "/") {
			continue
		}
		vals := strings.Join(c.values[flag], " ")
		if flag == "observers" {
			// A comma-separated list: complete the name after the last comma.
			fmt.Fprintf(&b, "  --%s|-%s)\n    local head=\"\"\n    [[ $cur == *,* ]] && head=\"${cur%%,*},\"\n    COMPREPLY=($(compgen -P \"$head\" -W %q -- \"${cur##*,}\"))\n    return ;;\n", flag, flag, vals)
			continue
		}
		fmt.Fprintf(&b, "  --%s|-%s)\n    COMPREPLY=($(compgen -W %q -- \"$cur\"))\n    return ;;\n", flag, flag, vals)
	}
	b.WriteString("  esac\n")
	fmt.Fprintf(&b, "  if [[ $cmd == study && $COMP_CWORD -eq 2 ]]; then\n    COMPREPLY=($(compgen -W %q -- \"$cur\"))\n    return\n  fi\n", strings.Join(c.studies, " "))
	fmt.Fprintf(&b, "  if [[ $cmd == help || $cmd == completion ]] && [[ $COMP_CWORD -eq 2 ]]; then\n")
	fmt.Fprintf(&b, "    [[ $cmd == help ]] && words=%q || words=\"bash zsh fish\"\n", strings.Join(c.commands, " "))
	b.WriteString("    COMPREPLY=($(compgen -W \"$words\" -- \"$cur\"))\n    return\n  fi\n")
	b.WriteString("  case \"$cmd\" in\n")
	for _, cmd := range sortedKeys(c.flags) {
		var names []string
		for _, f := range c.flags[cmd] {
			names = append(names, f.name)
		}
		fmt.Fprintf(&b, "  %s) words=%q ;;\n", cmd, strings.Join(names, " "))
	}
	b.WriteString("  esac\n")
	b.WriteString("  if [[ $cur == -* ]]; then\n    COMPREPLY=($(compgen -W \"$words\" -- \"$cur\"))\n  else\n    COMPREPLY=($(compgen -f -- \"$cur\"))\n  fi\n}\n")
	b.WriteString("complete -o filenames -F _obsbench obsbench\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func fishCompletion(w io.Writer, c completions) error {
	var b strings.Builder
	b.WriteString("# obsbench completion for fish: obsbench completion fish > ~/.config/fish/completions/obsbench.fish\n")
	b.WriteString("complete -c obsbench -f\n")
	// __obsbench_list completes the name after the last comma of a list.
	b.WriteString("function __obsbench_list\n  set -l head (string replace -r '[^,]*$' '' -- (commandline -ct))\n  for v in $argv\n    echo $head$v\n  end\nend\n")
	fmt.Fprintf(&b, "complete -c obsbench -n __fish_use_subcommand -a %s\n", fishQuote(strings.Join(c.commands, " ")))
	fmt.Fprintf(&b, "complete -c obsbench -n '__fish_seen_subcommand_from study; and test (count (commandline -opc)) -eq 2' -a %s\n", fishQuote(strings.Join(c.studies, " ")))
	fmt.Fprintf(&b, "complete -c obsbench -n '__fish_seen_subcommand_from help; and test (count (commandline -opc)) -eq 2' -a %s\n", fishQuote(strings.Join(c.commands, " ")))
	b.WriteString("complete -c obsbench -n '__fish_seen_subcommand_from completion' -a 'bash zsh fish'\n")
	for _, cmd := range sortedKeys(c.flags) {
		for _, f := range c.flags[cmd] {
			name := strings.TrimLeft(f.name, "-")
			opt := "-l " + name
			if len(name) == 1 {
				opt = "-o " + name // Go's flag package: -v, as fish's old-style option
			}
			line := fmt.Sprintf("complete -c obsbench -n '__fish_seen_subcommand_from %s' %s -d %s", cmd, opt, fishQuote(f.what))
			vals, ok := c.values[cmd+"/"+name]
			if !ok {
				vals, ok = c.values[name]
			}
			switch {
			case ok && name == "observers":
				line += " -x -a " + fishQuote("(__obsbench_list "+strings.Join(vals, " ")+")")
			case ok:
				line += " -x -a " + fishQuote(strings.Join(vals, " "))
			}
			b.WriteString(line + "\n")
		}
		// Files and directories for the arguments: a results directory,
		// a log, a spec.
		fmt.Fprintf(&b, "complete -c obsbench -n '__fish_seen_subcommand_from %s' -F\n", cmd)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// fishQuote quotes s for fish: single quotes, with \ and ' escaped.
func fishQuote(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
