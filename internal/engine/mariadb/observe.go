package mariadb

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/obsbench/obsbench/internal/engine"
	"github.com/obsbench/obsbench/internal/observer"
	"github.com/obsbench/obsbench/internal/poll"
	"github.com/obsbench/obsbench/internal/poller"
)

// mariadbRestart is why an external server refuses a startup option.
const mariadbRestart = "only a server restart with a changed option file changes; obsbench does that only on servers it manages"

// change is one applied step, with what undoes it. It is journaled (as
// JSON) before it is made, so that `obsbench restore` can undo it.
type change struct {
	Engine string `json:"engine"` // "mariadb", so that restore picks this engine
	// Setting is a global variable set with SET GLOBAL, or, with
	// Startup, an option in the managed server's option file.
	Setting string  `json:"setting,omitempty"`
	Prior   *string `json:"prior,omitempty"` // the value before; nil: none (option files only)
	Startup bool    `json:"startup,omitempty"`
	// Plugin is a plugin library obsbench installed (INSTALL SONAME).
	Plugin string   `json:"plugin,omitempty"`
	SQL    []string `json:"undo_sql,omitempty"` // statements that undo enable_sql
}

// Applied is an observer in force. Revert undoes it.
type Applied struct {
	s       *Server
	obs     observer.Observer
	changes engine.Changes[change]
	sink    engine.Sink
	poller  engine.Sink
}

// Observer is the observer that was applied.
func (a *Applied) Observer() observer.Observer { return a.obs }

// variable is what the server says about a global variable.
type variable struct {
	value    string
	readOnly bool // a startup option: changes only with a restart
	session  bool // also a session variable, copied when a session starts
}

// variables reads the server's global variables with their scope.
func variables(ctx context.Context, conn *sql.Conn) (map[string]variable, error) {
	rows, err := conn.QueryContext(ctx, `SELECT LOWER(VARIABLE_NAME), COALESCE(GLOBAL_VALUE, ''), READ_ONLY, VARIABLE_SCOPE
		FROM information_schema.SYSTEM_VARIABLES`)
	if err != nil {
		return nil, fmt.Errorf("read system variables: %w", err)
	}
	defer rows.Close()
	out := map[string]variable{}
	for rows.Next() {
		var name, value, ro, scope string
		if err := rows.Scan(&name, &value, &ro, &scope); err != nil {
			return nil, err
		}
		out[name] = variable{value: value, readOnly: ro == "YES", session: scope == "SESSION"}
	}
	return out, rows.Err()
}

// changePlan is what putting an observer in force changes on the server
// as it is now. A variable already at the observer's value is in neither
// list; an unknown one belongs to a plugin not yet installed, whose
// variables are all dynamic in the catalog's plugins.
type changePlan struct {
	startup, dynamic []string
	plugins          []string // to install
	vars             map[string]variable
}

func planChanges(ctx context.Context, conn *sql.Conn, o observer.Observer) (changePlan, error) {
	vars, err := variables(ctx, conn)
	if err != nil {
		return changePlan{}, err
	}
	p := changePlan{vars: vars}
	for _, lib := range o.Extensions {
		installed, err := pluginInstalled(ctx, conn, lib)
		if err != nil {
			return p, err
		}
		if !installed {
			p.plugins = append(p.plugins, lib)
		}
	}
	for _, name := range o.SettingNames() {
		v, known := vars[name]
		switch {
		case known && sameValue(v.value, o.Settings[name]):
		case known && v.readOnly:
			p.startup = append(p.startup, name)
		default:
			p.dynamic = append(p.dynamic, name)
		}
	}
	return p, nil
}

// sameValue compares a variable's value with a catalog value, which may
// spell booleans as ON/OFF, 1/0 or TRUE/FALSE.
func sameValue(cur, want string) bool {
	norm := func(v string) string {
		switch strings.ToUpper(v) {
		case "ON", "1", "TRUE", "YES":
			return "ON"
		case "OFF", "0", "FALSE", "NO":
			return "OFF"
		}
		return v
	}
	return strings.EqualFold(norm(cur), norm(want))
}

func pluginInstalled(ctx context.Context, conn *sql.Conn, lib string) (bool, error) {
	var n int
	err := conn.QueryRowContext(ctx, "SELECT COUNT(*) FROM information_schema.PLUGINS WHERE PLUGIN_LIBRARY = ? AND PLUGIN_STATUS = 'ACTIVE'", lib+".so").Scan(&n)
	if err != nil {
		return false, fmt.Errorf("look for plugin %s: %w", lib, err)
	}
	return n > 0, nil
}

// Apply puts o in force: startup options first (one restart), then
// plugins, then global variables, then o's enable_sql. A plugin's
// variables are unknown until it is installed, which is why the order
// matters. On error, what was already applied is reverted.
func (s *Server) Apply(ctx context.Context, o observer.Observer) (_ engine.Applied, err error) {
	o = s.withSinkDir(o)
	a := &Applied{s: s, obs: o, changes: engine.NewChanges[change](s.journal)}
	if o.Name == observer.Baseline || (len(o.Extensions) == 0 && len(o.Settings) == 0 && len(o.EnableSQL) == 0 && o.Sink == nil && o.Poller == nil) {
		return a, nil
	}
	conn, done, err := s.control(ctx)
	if err != nil {
		return nil, err
	}
	plan, err := s.checkedPlan(ctx, conn, o)
	if err != nil {
		done()
		return nil, err
	}
	defer engine.RevertIfFailed(ctx, &err, a.Revert)
	if err := a.openSink(ctx, o); err != nil {
		done()
		return nil, err
	}
	if len(plan.startup) > 0 {
		done()
		for _, name := range plan.startup {
			prior, had := s.startup.Option(name)
			c := change{Setting: name, Startup: true}
			if had {
				c.Prior = &prior
			}
			if err := a.record(c); err != nil {
				return nil, err
			}
			v := o.Settings[name]
			if err := s.startup.SetOption(name, &v); err != nil {
				return nil, err
			}
		}
		if err := s.startup.Restart(ctx); err != nil {
			return nil, fmt.Errorf("restart for %s: %w", o.Name, err)
		}
		if conn, done, err = s.control(ctx); err != nil {
			return nil, err
		}
	}
	defer done()
	for _, lib := range plan.plugins {
		if err := a.record(change{Plugin: lib}); err != nil {
			return nil, err
		}
		if _, err := conn.ExecContext(ctx, "INSTALL SONAME "+quoteLiteral(lib)); err != nil {
			return nil, fmt.Errorf("install plugin %s: %w", lib, err)
		}
	}
	for _, name := range plan.dynamic {
		if err := a.setGlobal(ctx, conn, name, o.Settings[name]); err != nil {
			return nil, err
		}
	}
	if len(o.EnableSQL) > 0 {
		if err := a.record(change{SQL: o.DisableSQL}); err != nil {
			return nil, err
		}
		for _, stmt := range o.EnableSQL {
			if _, err := conn.ExecContext(ctx, stmt); err != nil {
				return nil, fmt.Errorf("enable %s: %s: %w", o.Name, stmt, err)
			}
		}
	}
	stop, err := poller.For(ctx, s.Dial, o)
	if err != nil {
		return nil, err
	}
	a.poller.Set(stop)
	return a, nil
}

// setGlobal sets a global variable, first recording the value it had.
func (a *Applied) setGlobal(ctx context.Context, conn *sql.Conn, name, value string) error {
	var prior sql.NullString
	if err := conn.QueryRowContext(ctx, "SELECT @@GLOBAL."+name).Scan(&prior); err != nil {
		return fmt.Errorf("read prior value of %s: %w", name, err)
	}
	if err := a.record(change{Setting: name, Prior: &prior.String}); err != nil {
		return err
	}
	if _, err := conn.ExecContext(ctx, setGlobalSQL(name, value)); err != nil {
		return fmt.Errorf("set global %s = %s: %w", name, value, err)
	}
	return nil
}

var numberRE = regexp.MustCompile(`^-?[0-9]+(\.[0-9]+)?$`)

// setGlobalSQL is SET GLOBAL name = value (setSQL).
func setGlobalSQL(name, value string) string { return setSQL("GLOBAL", name, value) }

// setSQL is SET scope name = value, with value quoted unless it is a
// number: numeric variables refuse a string.
func setSQL(scope, name, value string) string {
	if !numberRE.MatchString(value) {
		value = quoteLiteral(value)
	}
	return fmt.Sprintf("SET %s %s = %s", scope, name, value)
}

// record journals c, when the server has a journal, before the change is
// made, and adds it to the changes Revert undoes.
func (a *Applied) record(c change) error {
	c.Engine = "mariadb"
	return a.changes.Record(c)
}

// Revert undoes the changes in reverse order: enable_sql, variables,
// plugins, then startup options with one restart. Every step is tried even
// when one fails; the failed ones stay for another Revert.
func (a *Applied) Revert(ctx context.Context) (err error) {
	defer a.sink.CloseAfter(&err)
	if a.poller.CloseAfter(&err); err != nil {
		return err
	}
	if a.changes.Len() == 0 {
		return nil
	}
	conn, done, err := a.s.control(ctx)
	if err != nil {
		return err
	}
	undone, err := a.changes.Undo(func(c change) error { return a.undo(ctx, conn, c) })
	errs := []error{err}
	restart := false
	for _, c := range undone {
		restart = restart || c.Startup
	}
	done()
	if restart && a.s.startup != nil {
		if err := a.s.startup.Restart(ctx); err != nil {
			errs = append(errs, fmt.Errorf("restart to revert %s: %w", a.obs.Name, err))
		}
	}
	return errors.Join(errs...)
}

func (a *Applied) undo(ctx context.Context, conn *sql.Conn, c change) error {
	switch {
	case c.SQL != nil:
		for _, stmt := range c.SQL {
			if _, err := conn.ExecContext(ctx, stmt); err != nil {
				return fmt.Errorf("disable %s: %s: %w", a.obs.Name, stmt, err)
			}
		}
	case c.Plugin != "":
		installed, err := pluginInstalled(ctx, conn, c.Plugin)
		if err != nil || !installed {
			return err
		}
		if _, err := conn.ExecContext(ctx, "UNINSTALL SONAME "+quoteLiteral(c.Plugin)); err != nil {
			return fmt.Errorf("uninstall plugin %s: %w", c.Plugin, err)
		}
		return waitUnloaded(ctx, conn, c.Plugin)
	case c.Startup:
		if a.s.startup == nil {
			return fmt.Errorf("startup option %s: only obsbench's own managed server has them", c.Setting)
		}
		return a.s.startup.SetOption(c.Setting, c.Prior)
	default:
		var exists int
		err := conn.QueryRowContext(ctx, "SELECT COUNT(*) FROM information_schema.SYSTEM_VARIABLES WHERE VARIABLE_NAME = ?", strings.ToUpper(c.Setting)).Scan(&exists)
		if err != nil || exists == 0 {
			return err // a plugin's variable, gone with its plugin
		}
		if _, err := conn.ExecContext(ctx, setGlobalSQL(c.Setting, *c.Prior)); err != nil {
			return fmt.Errorf("revert %s: %w", c.Setting, err)
		}
	}
	return nil
}

// waitUnloaded waits until an uninstalled plugin is gone with its
// variables. A plugin still in use by a session ("Plugin is busy and will
// be uninstalled on shutdown") stays, status DELETED, until that session
// releases it, which a session does at the end of its statement.
func waitUnloaded(ctx context.Context, conn *sql.Conn, lib string) error {
	return poll.Until(ctx, 10*time.Second, 20*time.Millisecond, func() (bool, error) {
		var n int
		if err := conn.QueryRowContext(ctx, "SELECT COUNT(*) FROM information_schema.PLUGINS WHERE PLUGIN_LIBRARY = ?", lib+".so").Scan(&n); err != nil {
			return false, fmt.Errorf("look for plugin %s: %w", lib, err)
		}
		return n == 0, nil
	}, func() error {
		return fmt.Errorf("plugin %s was uninstalled but is still in use after 10s; it goes when the sessions using it end, or at the server's shutdown", lib)
	})
}

// Check fails when o cannot be applied to this server: a plugin it needs
// is not installed, its sink cannot be provided, or it needs startup
// options and the server is not obsbench's to restart. Nothing is changed.
func (s *Server) Check(ctx context.Context, o observer.Observer) error {
	conn, done, err := s.control(ctx)
	if err != nil {
		return err
	}
	defer done()
	_, err = s.checkedPlan(ctx, conn, o)
	return err
}

// checkedPlan is what putting o in force would change, after the checks
// of Check: Apply, Check and PlanApply read the server's variables once.
func (s *Server) checkedPlan(ctx context.Context, conn *sql.Conn, o observer.Observer) (changePlan, error) {
	if o.Sink != nil && (s.host == nil || o.Sink.Kind != observer.SinkSlowDir) {
		return changePlan{}, sinkError(o)
	}
	if err := checkRequirements(ctx, conn, o); err != nil {
		return changePlan{}, err
	}
	plan, err := planChanges(ctx, conn, o)
	if err != nil {
		return plan, err
	}
	if len(plan.startup) > 0 && s.startup == nil {
		return plan, &engine.RestartError{Observer: o.Name, Settings: plan.startup, Needs: mariadbRestart}
	}
	return plan, nil
}

// checkRequirements verifies that each plugin o needs is in the server's
// plugin directory, when that directory is on this machine.
func checkRequirements(ctx context.Context, conn *sql.Conn, o observer.Observer) error {
	if len(o.Requires) == 0 {
		return nil
	}
	var dir string
	if err := conn.QueryRowContext(ctx, "SELECT @@plugin_dir").Scan(&dir); err != nil {
		return fmt.Errorf("find plugin directory: %w", err)
	}
	if _, err := os.Stat(dir); err != nil {
		return nil // not this machine's server: the server will say
	}
	for _, r := range o.Requires {
		if _, err := os.Stat(filepath.Join(dir, r.Library+".so")); err != nil {
			return &engine.MissingError{Observer: o.Name, Library: "the plugin " + r.Library, Package: r.PackageFor("")}
		}
	}
	return nil
}

// Split divides o into what stays in force in both phases of an
// alternation run (held: startup options and plugins) and what SET GLOBAL
// switches for running sessions at once (switched). A variable that a
// session copies when it starts, such as long_query_time or
// slow_query_log, would not reach the running sessions when switched, nor
// be off for them when held: an observer with one cannot alternate, and
// switched then has no settings (the runner uses rounds).
func (s *Server) Split(ctx context.Context, o observer.Observer) (held, switched observer.Observer, err error) {
	o = s.withSinkDir(o)
	if len(o.Settings) == 0 {
		held, switched = split(o, nil)
		return held, switched, nil
	}
	conn, done, err := s.control(ctx)
	if err != nil {
		return held, switched, err
	}
	defer done()
	vars, err := variables(ctx, conn)
	if err != nil {
		return held, switched, err
	}
	held, switched = split(o, func(name string) variable { return vars[name] })
	return held, switched, nil
}

// Of the catalog's variables, MariaDB 10.11's documentation (server
// system variables, performance_schema system variables) gives these as
// not dynamic (startup options) and these as session variables (a
// session copies them when it starts); every other is global and
// dynamic, the plugins' server_audit_* included. TestStaticSplit checks
// them against a server's information_schema.SYSTEM_VARIABLES.
var (
	startupOnly = map[string]bool{"performance_schema": true, "performance_schema_events_statements_history_long_size": true, "log_bin": true}
	sessionCopy = map[string]bool{"long_query_time": true, "log_slow_verbosity": true, "slow_query_log": true, "binlog_format": true}
)

// StartOnly says whether setting is a startup option (engine.Restarter).
func (Engine) StartOnly(setting string) bool { return startupOnly[setting] }

// StaticSplit is Split without a server, from the documented scopes:
// what `obsbench observers -v` says of each observer before any server is
// reached (engine.Splitter).
func (Engine) StaticSplit(o observer.Observer) (held, switched observer.Observer) {
	return split(o, func(name string) variable { return variable{readOnly: startupOnly[name], session: sessionCopy[name]} })
}

// split divides o by what each variable is (nil: all dynamic and global).
// A session variable would not reach the running sessions when switched:
// an observer with one is held whole, and switched has no settings.
func split(o observer.Observer, of func(string) variable) (held, switched observer.Observer) {
	if of == nil {
		of = func(string) variable { return variable{} }
	}
	for name := range o.Settings {
		if of(name).session {
			return o, observer.Observer{Name: o.Name, Engine: o.Engine, Settings: map[string]string{}}
		}
	}
	return observer.Split(o, func(name string) bool { return of(name).readOnly })
}

// Undo undoes changes as Apply journaled them (JSON), newest first: what
// `obsbench restore` does after obsbench was killed. Each undo is
// idempotent. An external server has no startup options of obsbench's.
func (s *Server) Undo(ctx context.Context, changes []json.RawMessage) error {
	cs, err := engine.Journaled[change](s.journal, changes)
	if err != nil {
		return err
	}
	a := &Applied{s: s, obs: observer.Observer{Name: "the journaled changes"}, changes: cs}
	return a.Revert(ctx)
}

// sinkError refuses o's sink: MariaDB has no analogue of a stream, and a
// slow directory is obsbench's only on its own servers.
func sinkError(o observer.Observer) error {
	e := &engine.SinkError{Observer: o.Name, Sink: *o.Sink}
	if o.Sink.Kind != observer.SinkSlowDir {
		e.Unsupported = "MariaDB"
	}
	return e
}
