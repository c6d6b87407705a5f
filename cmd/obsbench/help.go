package main

import (
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
)

// commandHelp is what a command's -h prints: what the command does, a few
// examples, then its flags in groups.
type commandHelp struct {
	usage    string // the synopsis after "usage: "
	summary  string // what the command does
	examples []string
	groups   []flagGroup // nil: one list of every flag
}

// flagGroup is a titled group of flags, listed in this order.
type flagGroup struct {
	title string
	flags []string
}

// helps are the commands' helps, by name as 'obsbench help NAME' takes it.
var helps = map[string]commandHelp{
	"run": {
		usage: "obsbench run [flags]",
		summary: `Measures what each observer (statement log, plan capture, audit, statistics
extension, ...) costs a workload: it runs the workload with and without
each observer and prints each one's overhead with a 95% confidence
interval, its latency, CPU and events recorded. With no flags it starts its
own PostgreSQL from the local binaries, copies it into a twin, and compares
the default observers by duet at half load (each twin's server at half
of its CPU quota; --closed-loop saturates it), then counts each one's
server instructions per statement under valgrind; that takes about 8
minutes on 2 cores.`,
		examples: []string{
			"obsbench run                                        # the default observers, managed PostgreSQL",
			"obsbench run --observers pg-stat-statements,pgaudit-read --rounds 8",
			"obsbench run --engine mariadb                       # the same on a managed MariaDB",
			"obsbench run --dsn 'host=db1 dbname=app' --allow-changes --observers log-statements-file",
		},
		groups: []flagGroup{
			{"Observers", []string{"observers", "observer-file", "dose", "max-overhead", "max-latency-added", "measure-collectors"}},
			{"Workload", []string{"workload", "clients", "rate", "load", "closed-loop", "latency-limit", "scale", "shrink", "blocks", "batch", "client-work", "script", "define", "query-mode", "dataset",
				"capture", "replay-mode", "replay-speed", "replay-passes", "sessions"}},
			{"Method and time", []string{"method", "rounds", "duration", "warmup", "seed", "twin-cpus", "alt-duration", "alt-rounds",
				"phase-min", "phase-max", "target-resolution", "max-time"}},
			{"Counted (instructions under valgrind)", []string{"count", "count-rounds", "count-statements", "count-warmup", "count-sessions", "count-shrink", "count-per-query", "count-width", "max-counted-overhead"}},
			{"Servers", []string{"engine", "dsn", "twin-dsn", "allow-changes", "dry-run", "standby", "standby-delay"}},
			{"Output", []string{"out", "format", "v", "waits", "kernel-waits", "counters", "on-failure", "resume"}},
			{"Scale-out (several load processes)", []string{"workers", "launcher", "driver-threads", "worker-prefix", "advertise",
				"coordinator-port", "image", "namespace", "kubeconfig", "worker-cpu", "worker-memory"}},
		},
	},
	"report": {
		usage:   "obsbench report [--format FORMAT] DIR",
		summary: "Renders the results of a finished or interrupted experiment, the directory 'obsbench run' wrote (its --out).",
		examples: []string{
			"obsbench report DIR                    # writes DIR/report.html",
			"obsbench report --format text DIR     # the run's table again",
			"obsbench report --format text -v DIR  # with every column",
			"obsbench report --format benchstat DIR > overhead.txt",
		},
	},
	"capture": {
		usage:   "obsbench capture [flags] LOG... (files, or directories of *.csv, *.json or *.log files)",
		summary: "Turns a server's statement log into a capture file that 'obsbench run --workload replay --capture FILE' replays.",
		examples: []string{
			"obsbench capture --out app.capture /var/log/postgresql/postgresql-15-main.csv",
			"obsbench capture --engine mariadb --out app.capture general.log",
		},
	},
	"inspect": {
		usage:   "obsbench inspect [flags]",
		summary: "Lists the observers active on a server now, or those of an experiment's results (--results).",
		examples: []string{
			"obsbench inspect --dsn 'host=db1 dbname=app'",
			"obsbench inspect --results DIR",
		},
	},
	"restore": {
		usage:   "obsbench restore [flags]",
		summary: "Undoes what a killed obsbench left changed (settings, servers, cgroups), from the journal it writes before each change.",
		examples: []string{
			"obsbench restore",
			"obsbench restore --dsn 'root:secret@tcp(db1:3306)/app'   # a MariaDB journal: the password is not kept",
		},
	},
	"calibrate": {
		usage:   "obsbench calibrate [flags]",
		summary: "Checks that obsbench recovers a known overhead: it builds synthetic observers of known CPU cost per statement, sized where they are measured (by default in a duet's twin), and measures them like any other.",
		examples: []string{
			"obsbench calibrate --effects 0.5,1,2,5          # by duet, the default method",
			"obsbench calibrate --method alternation --effects 3,10",
			"obsbench calibrate --workload dss-mix",
		},
	},
	"observers": {
		usage:   "obsbench observers [flags]",
		summary: "Lists the observer catalog of an engine: each observer's name, whether it is in the default set, what events it records and what it does.",
		examples: []string{
			"obsbench observers",
			"obsbench observers -v --engine mariadb   # with the settings each changes and how it is measured",
		},
	},
	"completion": {
		usage:   "obsbench completion bash|zsh|fish",
		summary: "Prints a script that completes obsbench's commands, flags, study names and the values of --engine, --method, --format, --workload and --observers.",
		examples: []string{
			"source <(obsbench completion bash)                          # this shell",
			"obsbench completion bash > /etc/bash_completion.d/obsbench  # every bash",
			"echo 'source <(obsbench completion zsh)' >> ~/.zshrc",
			"obsbench completion fish > ~/.config/fish/completions/obsbench.fish",
		},
	},
	"worker": {
		usage:   "obsbench worker --coordinator ADDRESS [flags]",
		summary: "Runs sessions for a coordinator ('obsbench run --workers N' starts its workers itself; run this by hand only on another machine).",
	},
}

// commandFlags is the flag set of 'obsbench command', its -h the
// command's help.
func commandFlags(command string) *flag.FlagSet {
	fs := flag.NewFlagSet("obsbench "+command, flag.ContinueOnError)
	helpUsage(fs, command)
	return fs
}

// helpUsage makes fs's -h print its command's help (helps[command]).
func helpUsage(fs *flag.FlagSet, command string) {
	h := helps[command]
	fs.Usage = func() { h.print(fs.Output(), fs) }
}

// print writes h, then fs's flags in h's groups.
func (h commandHelp) print(w io.Writer, fs *flag.FlagSet) {
	if h.usage != "" {
		fmt.Fprintf(w, "usage: %s\n\n", h.usage)
	}
	if h.summary != "" {
		fmt.Fprintf(w, "%s\n\n", strings.Join(wrap(h.summary, 76), "\n"))
	}
	if len(h.examples) > 0 {
		fmt.Fprintln(w, "Examples:")
		for _, e := range h.examples {
			fmt.Fprintf(w, "  %s\n", e)
		}
		fmt.Fprintln(w)
	}
	placed := map[string]bool{}
	for _, g := range h.groups {
		fmt.Fprintf(w, "%s:\n", g.title)
		for _, name := range g.flags {
			if f := fs.Lookup(name); f != nil {
				printFlag(w, f)
				placed[name] = true
			}
		}
		fmt.Fprintln(w)
	}
	var rest []*flag.Flag
	fs.VisitAll(func(f *flag.Flag) {
		if !placed[f.Name] {
			rest = append(rest, f)
		}
	})
	if len(rest) == 0 {
		return
	}
	title := "Flags:"
	if len(h.groups) > 0 {
		title = "Other flags:"
	}
	fmt.Fprintln(w, title)
	for _, f := range rest {
		printFlag(w, f)
	}
	fmt.Fprintln(w)
}

// printFlag writes one flag as the docs spell it (--name), its value's
// kind, its usage wrapped, and its default when it is not the zero value.
func printFlag(w io.Writer, f *flag.Flag) {
	kind, usage := flag.UnquoteUsage(f)
	line := "  --" + f.Name
	if len(f.Name) == 1 {
		line = "  -" + f.Name // -v, as the tools a user knows spell it
	}
	if kind != "" {
		line += " " + kind
	}
	if !zeroDefault(f.DefValue) && !strings.Contains(usage, "(default") {
		usage += " (default " + f.DefValue + ")"
	}
	fmt.Fprintln(w, line)
	for _, l := range wrap(usage, 72) {
		fmt.Fprintf(w, "        %s\n", l)
	}
}

// zeroDefault says whether a flag's default is its kind's zero value,
// which the help does not print.
func zeroDefault(v string) bool {
	return slices.Contains([]string{"", "0", "0s", "false", "[]", "off"}, v)
}

// wrap breaks s into lines of at most width bytes at spaces (a longer word
// gets a line of its own).
func wrap(s string, width int) []string {
	var lines []string
	line := ""
	for _, word := range strings.Fields(s) {
		switch {
		case line == "":
			line = word
		case len(line)+1+len(word) <= width:
			line += " " + word
		default:
			lines = append(lines, line)
			line = word
		}
	}
	if line != "" {
		lines = append(lines, line)
	}
	return lines
}
