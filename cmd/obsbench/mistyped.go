package main

import (
	"flag"
	"fmt"
	"strings"
	"unicode"

	"github.com/obsbench/obsbench/internal/observer"
)

// pgbenchShort are pgbench's short options that mean what one of run's
// flags means, as pgbench's documentation defines them: -c clients
// (sessions), -s the scale factor, -f a script FILE[@WEIGHT], -M the
// query protocol, -D a script variable, -R the rate, -L the latency
// limit. A pgbench user's habits work as typed.
var pgbenchShort = map[string]string{
	"c": "clients", "s": "scale", "f": "script", "M": "query-mode", "D": "define", "R": "rate", "L": "latency-limit",
}

// pgbenchOther says, for pgbench's short options whose meaning differs
// from any of run's flags, what run has instead.
var pgbenchOther = map[string]string{
	"j": "pgbench's worker threads; --driver-threads sets obsbench's",
	"T": "pgbench's whole run time; --duration is each run's, --max-time the whole experiment's",
	"t": "pgbench's transactions per client; a run lasts --duration",
	"P": "pgbench's progress reports; obsbench reports progress as it goes",
	"S": "pgbench's select-only script; give --workload pgbench --script select-only",
	"N": "pgbench's simple-update script; give --workload pgbench --script simple-update",
	"C": "pgbench's new connection per transaction; obsbench's sessions keep theirs",
	"r": "pgbench's per-statement latencies; -v prints every column, and the counted part each query's instructions",
	"l": "pgbench's per-transaction log; --format series writes each second's figures",
}

// expandShort rewrites pgbench's short options in args, up to "--", to
// run's long flags: -c 8, -c=8 and -c8 become --clients 8. A value may be
// joined to its letter only where no long flag could be meant: after an
// upper-case letter, or digits after a lower-case one (-count is
// --count, -c8 is --clients 8). -L's plain number is milliseconds, as
// in pgbench.
func expandShort(args []string) []string {
	out := make([]string, 0, len(args))
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return append(out, args[i:]...)
		}
		long := expandOne(a)
		if long == a {
			out = append(out, a)
			continue
		}
		name, value, joined := strings.Cut(long, "=")
		if !joined && i+1 < len(args) {
			i++
			value, joined = args[i], true
		}
		if name == "--latency-limit" && plainNumber(value) {
			value += "ms"
		}
		if joined {
			long = name + "=" + value
		}
		out = append(out, long)
	}
	return out
}

func expandOne(a string) string {
	if len(a) < 2 || a[0] != '-' || a[1] == '-' {
		return a
	}
	letter, rest := a[1:2], a[2:]
	long, ok := pgbenchShort[letter]
	switch {
	case !ok:
		return a
	case rest == "":
		return "--" + long
	case rest[0] == '=':
		return "--" + long + rest
	case unicode.IsUpper(rune(letter[0])) || plainNumber(rest):
		return "--" + long + "=" + rest
	}
	return a
}

// plainNumber says whether s is digits (and a decimal point) alone: a
// value joined to a short option's letter, or a latency without its unit.
func plainNumber(s string) bool { return s != "" && strings.Trim(s, "0123456789.") == "" }

// typedAs is how args spelled the flag the flag package names name: its
// dashes as typed (-j, --c), or --name where it cannot be found.
func typedAs(args []string, name string) string {
	for _, a := range args {
		if a == "--" {
			break
		}
		trimmed := strings.TrimLeft(a, "-")
		if n, _, _ := strings.Cut(trimmed, "="); n == name && trimmed != a {
			return a[:len(a)-len(trimmed)] + name
		}
	}
	return "--" + name
}

// unknownFlag says which flag fs does not know, as args typed it, with
// the nearest it knows, or for a pgbench option what run has instead;
// and where the command's flags are listed.
func unknownFlag(fs *flag.FlagSet, args []string, name string) error {
	msg := "unknown flag " + typedAs(args, name)
	switch other, pgbench := pgbenchOther[name]; {
	case pgbench && fs.Lookup("clients") != nil:
		msg += " (" + other + ")"
	case len(name) > 1:
		var known []string
		fs.VisitAll(func(f *flag.Flag) { known = append(known, f.Name) })
		if s := observer.ClosestName(name, known); s != "" {
			msg += fmt.Sprintf(" (did you mean --%s?)", s)
		}
	}
	return fmt.Errorf("%s; '%s -h' lists its flags", msg, fs.Name())
}

// commandNames are obsbench's commands, as the top-level usage lists
// them, and help.
func commandNames() []string {
	_, list, _ := strings.Cut(usage, "commands:\n")
	list, _, _ = strings.Cut(list, "\n\n")
	var out []string
	for _, line := range strings.Split(list, "\n") {
		if f := strings.Fields(line); len(f) > 0 {
			out = append(out, f[0])
		}
	}
	return append(out, "help")
}

// unknownCommand names a command obsbench does not have, with the nearest
// it has, rather than the whole usage.
func unknownCommand(name string) error {
	msg := fmt.Sprintf("unknown command %q", name)
	if s := observer.ClosestName(name, commandNames()); s != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", s)
	}
	return usagef("%s; 'obsbench help' lists the commands", msg)
}
