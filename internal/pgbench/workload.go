package pgbench

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/obsbench/obsbench/internal/workload"
)

// Tags of the two workloads: each statement a session sends starts with
// the tag as a comment (/* obsbench-pgbench */ UPDATE ...), so that the
// records an observer keeps of them can be counted and told from
// obsbench's own statements.
const (
	Tag    = "obsbench-pgbench"
	SQLTag = "obsbench-sql"
)

// historySQL is pgbench_history as pgbench -i creates it (nullable
// columns, no key), which a dataset's NOT NULL tables cannot be: the
// built-in scripts insert into it. SQL Server's timestamp is a row
// version, so its mtime is a datetime2.
const historySQL = "CREATE TABLE IF NOT EXISTS pgbench_history (tid int, bid int, aid int, delta int, mtime %s, filler char(22))"

// Options configure a pgbench workload.
type Options struct {
	// Scripts are run by weight, one per transaction.
	Scripts []Weighted
	// Defines are --define NAME=VALUE: variables every client starts
	// with (pgbench -D), over scale and the seeds.
	Defines map[string]string
	// Seed seeds each client's generator (pgbench --random-seed): client
	// i of a run draws from its own stream, and each run from new ones.
	Seed uint64
	// Dataset is what the scripts read: pgbench -i's tables by default.
	Dataset string
	// Mode is how statements reach the server (pgbench -M); "" is
	// pgbench's default, simple.
	Mode QueryMode
}

// Meta is the pgbench workload of o, registered under no name: the run
// command builds it from --script. Its one parameter, scale, is
// pgbench's -s: the size of pgbench -i's tables and the :scale variable.
func Meta(o Options) workload.Meta {
	ds := o.Dataset
	if ds == "" {
		ds = "pgbench"
	}
	var names []string
	for _, w := range o.Scripts {
		names = append(names, fmt.Sprintf("%s@%d", w.Script.Name, w.Weight))
	}
	runs := new(atomic.Uint64)
	return workload.Meta{
		Name:           "pgbench",
		Description:    "pgbench scripts " + strings.Join(names, ", "),
		Dataset:        ds,
		Tag:            Tag,
		TextStatements: modeOr(o.Mode) == Simple,
		DialectSetup:   historySetup(ds),
		DefaultClients: 1, // pgbench's -c
		Params: []workload.Param{{Name: "scale", Default: 1, Min: 1, Max: 1000,
			Usage: "dataset scale: dss's rows x scale; pgbench's -s (pgbench -i's tables at this scale, and :scale)"}},
		Build: func(p map[string]int) workload.Workload {
			vars := map[string]string{"scale": strconv.Itoa(p["scale"])}
			for k, v := range o.Defines {
				vars[k] = v // -D scale=N wins over -s, as in pgbench
			}
			return &scripts{list: o.Scripts, vars: vars, seed: o.Seed, run: runs.Add(1), tag: Tag, mode: modeOr(o.Mode)}
		},
	}
}

// SQLMeta is the SQL file workload: each session runs the file's
// statements in order, over and over, on dataset (none: the user's own
// tables, on their server), sent in mode ("": simple).
func SQLMeta(s *Script, dataset string, mode QueryMode) workload.Meta {
	if dataset == "" {
		dataset = "none"
	}
	return workload.Meta{
		Name:           "sql",
		Description:    fmt.Sprintf("the %d statements of %s, in order, in a loop", len(s.Commands), s.Name),
		Dataset:        dataset,
		Tag:            SQLTag,
		TextStatements: modeOr(mode) == Simple,
		DefaultClients: 1,
		New: func() workload.Workload {
			return &scripts{list: []Weighted{{Script: s, Weight: 1}}, tag: SQLTag, mode: modeOr(mode)}
		},
	}
}

// historySetup creates pgbench_history beside pgbench -i's tables.
func historySetup(dataset string) map[workload.Dialect][]string {
	if dataset != "pgbench" {
		return nil
	}
	return map[workload.Dialect][]string{
		workload.PostgreSQL:  {fmt.Sprintf(historySQL, "timestamp")},
		workload.MariaDB:     {fmt.Sprintf(historySQL, "timestamp NULL")},
		workload.TransactSQL: {fmt.Sprintf(historySQL, "datetime2")},
	}
}

// modeOr is m, or pgbench's default mode.
func modeOr(m QueryMode) QueryMode {
	if m == "" {
		return Simple
	}
	return m
}

// scripts is one run of a script workload.
type scripts struct {
	list []Weighted
	vars map[string]string
	seed uint64
	run  uint64
	tag  string
	mode QueryMode
}

// client makes session's client, with client_id = session.
func (w *scripts) client(conn workload.Conn, session int) (*Client, error) {
	vars := map[string]string{}
	for k, v := range w.vars {
		vars[k] = v
	}
	seed := clientSeed(w.seed, w.run, session)
	if _, ok := vars["random_seed"]; !ok {
		vars["random_seed"] = strconv.FormatUint(w.seed, 10)
	}
	if _, ok := vars["default_seed"]; !ok {
		// pgbench draws default_seed once per run, for every client: the
		// hash functions give each client the same values.
		vars["default_seed"] = strconv.FormatInt(int64(NewPRNG(clientSeed(w.seed, w.run, -1)).Uint64()), 10)
	}
	c, err := NewClient(conn, w.list, vars, session, seed, w.tag)
	if err != nil {
		return nil, err
	}
	return c, c.SetQueryMode(w.mode)
}

// Check has the server parse every statement on conn without running any
// (workload.Checker): a statement that cannot run in the query mode
// stops the experiment before it starts.
func (w *scripts) Check(ctx context.Context, conn workload.Conn) error {
	c, err := w.client(conn, 0)
	if err != nil {
		return err
	}
	return c.Check(ctx)
}

// Worker makes session's client, with client_id = session, and in
// prepared mode prepares every statement of its scripts before the run
// (pgbench -M prepared prepares a script's statements before its first
// transaction).
func (w *scripts) Worker(ctx context.Context, conn workload.Conn, session int) (workload.Op, error) {
	c, err := w.client(conn, session)
	if err != nil {
		return nil, err
	}
	if err := c.PrepareAll(ctx); err != nil {
		return nil, err
	}
	return c.Op, nil
}

// clientSeed is the seed of session's generator in run number run (-1:
// the run's own draws): a splitmix64 step, so that nearby seeds give
// unrelated streams.
func clientSeed(seed, run uint64, session int) uint64 {
	x := seed ^ run<<32 ^ uint64(session+1)
	return splitmix64(&x)
}

// ValidName says whether name can be a variable (pgbench's
// valid_variable_name): a letter, '_' or a non-ASCII byte, then those or
// digits.
func ValidName(name string) bool {
	if name == "" || !isAlpha(name[0]) {
		return false
	}
	for i := 1; i < len(name); i++ {
		if !isAlnum(name[i]) {
			return false
		}
	}
	return true
}

// StatementNames names the statements of the run's scripts: the driver
// keeps each one's latency (pgbench -r).
func (w *scripts) StatementNames() []string { return StatementNames(w.list) }
