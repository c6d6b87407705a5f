package server

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// ErrNoValgrind is returned when instructions are to be counted and
// valgrind is not installed.
var ErrNoValgrind = errors.New("valgrind not found (apt-get install valgrind; make install-deps installs it)")

// CountDir is where a counted server's processes write their counts.
const CountDir = "counts"

// CallgrindInclusive reads a callgrind output file (the format:
// https://valgrind.org/docs/manual/cl-format.html) and returns its total
// Ir and the inclusive Ir of every call to the functions whose name
// begins with entry, less what those functions spent in the calls they
// make directly to functions whose name begins with skip ("" skips
// nothing). A call's inclusive cost is the cost line after its "calls="
// line; "fn=" names the calling function and "cfn=" the called one, with
// the format's name compression ("(id) name" defines id, "(id)" refers
// to it). entry must not call itself, directly or not, or its work would
// be counted more than once.
func CallgrindInclusive(r io.Reader, entry, skip string) (total, inside uint64, err error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	c := inclusive{entry: entry, skip: skip, names: map[string]string{}, positions: 1, irField: -1}
	line := 0
	for sc.Scan() {
		line++
		if err := c.read(sc.Text()); err != nil {
			return 0, 0, fmt.Errorf("line %d: %w", line, err)
		}
	}
	if err := sc.Err(); err != nil {
		return 0, 0, err
	}
	if !c.haveTotal {
		return 0, 0, fmt.Errorf("no totals: the file is not whole")
	}
	if c.inside > c.total || c.skipped > c.inside {
		return 0, 0, fmt.Errorf("%d instructions inside %s (%d of them in %s), more than the total %d or than itself: %s calls itself",
			c.inside, entry, c.skipped, skip, c.total, entry)
	}
	return c.total, c.inside - c.skipped, nil
}

// inclusive is CallgrindInclusive's reading of a file, line by line.
type inclusive struct {
	entry, skip    string
	names          map[string]string // compressed names by id
	positions      int
	irField        int
	caller, called string // the current fn's and cfn's names
	afterCall      bool   // the line after "calls=" is the call's inclusive cost
	haveTotal      bool
	total, inside  uint64
	skipped        uint64 // of inside, in calls to skip
}

// read reads one line: a call's cost, a fn=, cfn= or calls= line, or a
// header (positions, events, totals).
func (c *inclusive) read(text string) error {
	if c.afterCall {
		c.afterCall = false
		return c.callCost(text)
	}
	key, value, ok := strings.Cut(text, "=")
	if ok && !strings.ContainsAny(key, " :") {
		switch key {
		case "fn", "cfn":
			if name := compressed(c.names, value); key == "fn" {
				c.caller = name
			} else {
				c.called = name
			}
		case "calls":
			c.afterCall = true
		}
		return nil
	}
	key, value, ok = strings.Cut(text, ": ")
	if !ok {
		return nil
	}
	return c.header(key, value)
}

// callCost adds the inclusive cost of a call into entry to inside, or,
// of a call entry makes to skip, to skipped.
func (c *inclusive) callCost(text string) error {
	in := strings.HasPrefix(c.called, c.entry)
	out := c.skip != "" && strings.HasPrefix(c.caller, c.entry) && strings.HasPrefix(c.called, c.skip)
	if !in && !out {
		return nil
	}
	n, err := irOf(text, c.positions, c.irField)
	if err != nil {
		return err
	}
	if in {
		c.inside += n
	} else {
		c.skipped += n
	}
	return nil
}

// header reads the lines that say how cost lines are laid out, and the
// total.
func (c *inclusive) header(key, value string) error {
	switch key {
	case "positions":
		c.positions = len(strings.Fields(value))
	case "events":
		for i, e := range strings.Fields(value) {
			if e == "Ir" {
				c.irField = i
			}
		}
		if c.irField < 0 {
			return fmt.Errorf("events %q: no Ir", value)
		}
	case "totals", "summary":
		f := strings.Fields(value)
		if c.irField < 0 || c.irField >= len(f) {
			return fmt.Errorf("%s %q before or without Ir", key, value)
		}
		var err error
		if c.total, err = strconv.ParseUint(f[c.irField], 10, 64); err != nil {
			return fmt.Errorf("%s: %w", key, err)
		}
		c.haveTotal = true
	}
	return nil
}

// compressed resolves callgrind's name compression: "(id) name" defines
// id as name, "(id)" is the name defined before.
func compressed(names map[string]string, value string) string {
	if !strings.HasPrefix(value, "(") {
		return value
	}
	id, name, ok := strings.Cut(value, ")")
	if !ok {
		return value
	}
	name = strings.TrimPrefix(name, " ")
	if name == "" {
		return names[id]
	}
	names[id] = name
	return name
}

// irOf is the Ir of a cost line: positions first, then the events in the
// file's order; events left off at the end are 0.
func irOf(text string, positions, irField int) (uint64, error) {
	if irField < 0 {
		return 0, fmt.Errorf("a cost before the events line")
	}
	f := strings.Fields(text)
	i := positions + irField
	if len(f) < positions {
		return 0, fmt.Errorf("cost line %q: want %d position(s) and costs", text, positions)
	}
	if i >= len(f) {
		return 0, nil
	}
	return strconv.ParseUint(f[i], 10, 64)
}

// NumberedDumps are the files callgrind wrote before a process's last
// (path.1, path.2, ...: one at each --dump-before or --dump-after), in
// order.
func NumberedDumps(path string) ([]string, error) {
	files, err := filepath.Glob(path + ".*")
	if err != nil {
		return nil, err
	}
	n := func(f string) int {
		k, _ := strconv.Atoi(strings.TrimPrefix(filepath.Ext(f), "."))
		return k
	}
	slices.SortFunc(files, func(a, b string) int { return n(a) - n(b) })
	return files, nil
}
