package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/obsbench/obsbench/internal/observer"
)

// errHelp is returned after -h printed a command's flags.
var errHelp = errors.New("help shown")

// parseFlags parses args; an invalid flag gives one line (the caller
// prints it) rather than the flag package's error plus the whole usage.
func parseFlags(fs *flag.FlagSet, args []string, stderr io.Writer) error {
	fs.SetOutput(io.Discard)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fs.SetOutput(stderr)
			fmt.Fprintf(stderr, "usage of %s:\n", fs.Name())
			fs.PrintDefaults()
			return errHelp
		}
		return usageError{err}
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q", fs.Arg(0))
	}
	return nil
}

// loadCatalog returns the built-in catalog plus the user's observer file.
func loadCatalog(file string) (*observer.Catalog, error) {
	cat, err := observer.Builtin()
	if err != nil {
		return nil, err
	}
	if file != "" {
		if err := cat.LoadFile(file); err != nil {
			return nil, usageError{err}
		}
	}
	return cat, nil
}

func observersCmd(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("obsbench observers", flag.ContinueOnError)
	engine := fs.String("engine", "postgres", "engine whose observers to list")
	file := fs.String("observer-file", "", "YAML file with more observers (same schema as the catalog)")
	verbose := fs.Bool("v", false, "also show the settings each observer changes")
	if err := parseFlags(fs, args, stderr); err != nil {
		return err
	}
	if err := checkEngine(*engine); err != nil {
		return err
	}
	cat, err := loadCatalog(*file)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tDEFAULT\tEVENTS\tDESCRIPTION")
	for _, o := range cat.All(*engine) {
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
		}
	}
	return tw.Flush()
}

func checkEngine(engine string) error {
	if !slices.Contains(observer.Engines, engine) {
		return usagef("--engine %q is not supported; valid: %s", engine, strings.Join(observer.Engines, ", "))
	}
	return nil
}

// splitList splits a comma-separated flag value, dropping empty items.
func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
