package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/obsbench/obsbench/internal/app"
	"github.com/obsbench/obsbench/internal/engine"
	"github.com/obsbench/obsbench/internal/spec"
)

// errHelp is returned after -h printed a command's flags.
var errHelp = errors.New("help shown")

// parseFlags parses args; an invalid flag gives one line (the caller
// prints it) rather than the flag package's error plus the whole usage.
// -h prints the flags on help (standard output: help asked for is not
// an error).
func parseFlags(fs *flag.FlagSet, args []string, help io.Writer) error {
	rest, err := parseInterspersed(fs, args, help)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return unexpected(fs, args, rest[0])
	}
	return nil
}

// parseInterspersed parses flags that may come before, between or after
// the positional arguments (report DIR --format csv, report --format csv
// DIR), and returns the positional ones; "--" ends the flags.
func parseInterspersed(fs *flag.FlagSet, args []string, help io.Writer) ([]string, error) {
	fs.SetOutput(io.Discard)
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				fs.SetOutput(help)
				fs.Usage() // the flag package's, or a command's own usage line
				return nil, errHelp
			}
			return nil, usageError{Err: flagError(fs, args, err)}
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return positional, nil
		}
		if len(args) > len(rest) && args[len(args)-len(rest)-1] == "--" {
			return append(positional, rest...), nil
		}
		positional = append(positional, rest[0])
		args = rest[1:]
	}
}

// unexpected is the error for a positional argument a command does not
// take. A bool flag's value must follow '=' (--counters=false): given
// apart, the value is read as an argument, which is said.
func unexpected(fs *flag.FlagSet, args []string, arg string) error {
	if arg == "true" || arg == "false" {
		for i := 1; i < len(args); i++ {
			name := strings.TrimLeft(args[i-1], "-")
			if args[i] != arg || name == "" {
				continue
			}
			if f := fs.Lookup(name); f != nil {
				if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
					return usagef("--%s takes its value after '=': --%s=%s", name, name, arg)
				}
			}
		}
	}
	return usagef("unexpected argument %q", arg)
}

func observersCmd(args []string, stdout, stderr io.Writer) error {
	fs := commandFlags("observers")
	name := fs.String("engine", spec.Default().Engine, "engine whose observers to list")
	file := fs.String("observer-file", "", "YAML file with more observers (same schema as the catalog)")
	verbose := fs.Bool("v", false, "also show, per observer, the settings it changes, what needs a restart, how --method auto measures it and whether it runs on an external (--dsn) server")
	if err := parseFlags(fs, args, stdout); err != nil {
		return err
	}
	eng, err := engine.Lookup(*name)
	if err != nil {
		return spec.FromEngine(err, "--dsn")
	}
	cat, err := app.LoadCatalog(*file)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tDEFAULT\tEVENTS\tDESCRIPTION")
	for _, o := range cat.All(*name) {
		def, ev := "", "-"
		if o.Default {
			def = "yes"
		}
		if o.Events != nil {
			ev = o.Events.Source
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", o.Name, def, ev, o.Description)
		if *verbose {
			fmt.Fprintf(tw, "\t\t\tchanges: %s\n", o.Summary())
			for _, line := range observerPlan(eng, o) {
				fmt.Fprintf(tw, "\t\t\t%s\n", line)
			}
		}
	}
	return tw.Flush()
}

// undefinedFlag is how the flag package reports a flag it does not know.
var undefinedFlag = regexp.MustCompile(`^flag provided but not defined: -+(.*)$`)

// durationWant says what a duration flag wants, for a value that is not
// one: a number without its unit gets the unit suggested.
func durationWant(value string) string {
	if _, err := strconv.ParseFloat(value, 64); err == nil {
		return fmt.Sprintf("want a duration with its unit, e.g. %ss, %sms or %sm", value, value, value)
	}
	return "want a duration such as 500ms, 30s, 5m or 1h30m"
}

// invalidValue is how the flag package reports a value it cannot parse.
var invalidValue = regexp.MustCompile(`^invalid value "(.*)" for flag -(\S+): (.*)$`)

// flagError says what was wrong with a flag's value in the form of
// obsbench's other errors (--name "value": why), with the parser's reason,
// which the flag package reduces to "parse error".
func flagError(fs *flag.FlagSet, args []string, err error) error {
	if m := undefinedFlag.FindStringSubmatch(err.Error()); m != nil {
		return unknownFlag(fs, args, m[1])
	}
	m := invalidValue.FindStringSubmatch(err.Error())
	if m == nil {
		return err
	}
	value, name, why := m[1], m[2], m[3]
	if f := fs.Lookup(name); f != nil && why == "parse error" {
		if g, ok := f.Value.(flag.Getter); ok {
			switch g.Get().(type) {
			case time.Duration:
				why = durationWant(value)
			case int, int64, uint64, uint:
				why = "want a whole number"
			case float64:
				why = "want a number"
			case bool:
				why = "want true or false"
			}
		}
	}
	return fmt.Errorf("--%s %q: %s", name, value, why)
}
