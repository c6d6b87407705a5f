package server

import (
	"bufio"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// callgrindInclusive reads a callgrind output file (the format:
// https://valgrind.org/docs/manual/cl-format.html) and returns its total
// Ir and the inclusive Ir of every call to the functions whose name
// begins with entry, less what those functions spent in the calls they
// make directly to functions whose name begins with skip ("" skips
// nothing). A call's inclusive cost is the cost line after its "calls="
// line; "fn=" names the calling function and "cfn=" the called one, with
// the format's name compression ("(id) name" defines id, "(id)" refers
// to it). entry must not call itself, directly or not, or its work would
// be counted more than once.
func callgrindInclusive(r io.Reader, entry, skip string) (total, inside uint64, err error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	names := map[string]string{}
	positions, irField := 1, -1
	caller, called := "", "" // the current fn's and cfn's names
	// The line after "calls=" is the call's inclusive cost.
	var afterCall, haveTotal bool
	var skipped uint64
	line := 0
	for sc.Scan() {
		line++
		text := sc.Text()
		if afterCall {
			afterCall = false
			in := strings.HasPrefix(called, entry)
			out := skip != "" && strings.HasPrefix(caller, entry) && strings.HasPrefix(called, skip)
			if !in && !out {
				continue
			}
			n, err := irOf(text, positions, irField)
			if err != nil {
				return 0, 0, fmt.Errorf("line %d: %w", line, err)
			}
			if in {
				inside += n
			} else {
				skipped += n
			}
			continue
		}
		key, value, ok := strings.Cut(text, "=")
		if ok && !strings.ContainsAny(key, " :") {
			switch key {
			case "fn", "cfn":
				if name := compressed(names, value); key == "fn" {
					caller = name
				} else {
					called = name
				}
			case "calls":
				afterCall = true
			}
			continue
		}
		key, value, ok = strings.Cut(text, ": ")
		if !ok {
			continue
		}
		switch key {
		case "positions":
			positions = len(strings.Fields(value))
		case "events":
			for i, e := range strings.Fields(value) {
				if e == "Ir" {
					irField = i
				}
			}
			if irField < 0 {
				return 0, 0, fmt.Errorf("line %d: events %q: no Ir", line, value)
			}
		case "totals", "summary":
			f := strings.Fields(value)
			if irField < 0 || irField >= len(f) {
				return 0, 0, fmt.Errorf("line %d: %s %q before or without Ir", line, key, value)
			}
			if total, err = strconv.ParseUint(f[irField], 10, 64); err != nil {
				return 0, 0, fmt.Errorf("line %d: %s: %w", line, key, err)
			}
			haveTotal = true
		}
	}
	if err := sc.Err(); err != nil {
		return 0, 0, err
	}
	if !haveTotal {
		return 0, 0, fmt.Errorf("no totals: the file is not whole")
	}
	if inside > total || skipped > inside {
		return 0, 0, fmt.Errorf("%d instructions inside %s (%d of them in %s), more than the total %d or than itself: %s calls itself",
			inside, entry, skipped, skip, total, entry)
	}
	return total, inside - skipped, nil
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

// numberedDumps are the files callgrind wrote before a process's last
// (path.1, path.2, ...: one at each --dump-before or --dump-after), in
// order.
func numberedDumps(path string) ([]string, error) {
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
