package pgbench

import (
	"fmt"
	"sort"
	"strings"
)

// Builtins are pgbench's built-in scripts (pgbench --show-script=NAME),
// run against the tables pgbench -i creates at a scale.
var Builtins = map[string]string{
	"tpcb-like": `\set aid random(1, 100000 * :scale)
\set bid random(1, 1 * :scale)
\set tid random(1, 10 * :scale)
\set delta random(-5000, 5000)
BEGIN;
UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid;
SELECT abalance FROM pgbench_accounts WHERE aid = :aid;
UPDATE pgbench_tellers SET tbalance = tbalance + :delta WHERE tid = :tid;
UPDATE pgbench_branches SET bbalance = bbalance + :delta WHERE bid = :bid;
INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (:tid, :bid, :aid, :delta, CURRENT_TIMESTAMP);
END;
`,
	"simple-update": `\set aid random(1, 100000 * :scale)
\set bid random(1, 1 * :scale)
\set tid random(1, 10 * :scale)
\set delta random(-5000, 5000)
BEGIN;
UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid;
SELECT abalance FROM pgbench_accounts WHERE aid = :aid;
INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (:tid, :bid, :aid, :delta, CURRENT_TIMESTAMP);
END;
`,
	"select-only": `\set aid random(1, 100000 * :scale)
SELECT abalance FROM pgbench_accounts WHERE aid = :aid;
`,
}

// Builtin parses the built-in script called name.
func Builtin(name string) (*Script, error) {
	text, ok := Builtins[name]
	if !ok {
		names := make([]string, 0, len(Builtins))
		for n := range Builtins {
			names = append(names, n)
		}
		sort.Strings(names)
		return nil, fmt.Errorf("no built-in script %q (built-ins: %s)", name, strings.Join(names, ", "))
	}
	return ParseScript("builtin:"+name, text)
}
