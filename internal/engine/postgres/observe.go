package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/obsbench/obsbench/internal/engine"
	"github.com/obsbench/obsbench/internal/observer"
	"github.com/obsbench/obsbench/internal/poller"
)

// pgRestart is why an external server refuses a restart-only setting.
const pgRestart = "needs a server restart; obsbench restarts only servers it manages"

// change is one applied step, with what undoes it. It is journaled (as
// JSON) before it is made, so that `obsbench restore` can undo it.
type change struct {
	Engine  string   `json:"engine"` // "postgres", so that restore picks this engine
	Setting string   `json:"setting,omitempty"`
	Prior   *string  `json:"prior,omitempty"`     // the postgresql.auto.conf value before; nil = none
	Restart bool     `json:"restart,omitempty"`   // needs a restart to take effect
	Ext     string   `json:"extension,omitempty"` // an extension obsbench created
	SQL     []string `json:"undo_sql,omitempty"`  // statements that undo the observer's enable_sql
}

// Applied is an observer in force on the server. Revert undoes it.
type Applied struct {
	s        *Server
	obs      observer.Observer
	changes  engine.Changes[change]
	sink     engine.Sink
	consumer engine.Sink
	poller   engine.Sink
}

// ApplyRestarts says whether Apply(o) restarts the server: a library to
// preload or a restart-only setting that is not in force yet, on a server
// obsbench may restart. The restart comes before anything a session sees.
func (s *Server) ApplyRestarts(ctx context.Context, o observer.Observer) (bool, error) {
	o = s.withSinkDir(o)
	if s.restart == nil || o.Name == observer.Baseline || (len(o.Preload) == 0 && len(o.Settings) == 0) {
		return false, nil
	}
	conn, err := s.connect(ctx)
	if err != nil {
		return false, err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	plan, err := planChanges(ctx, conn, o)
	return len(plan.restart) > 0, err
}

// Apply puts o in force: preload libraries and restart-only settings first
// (restarting once), then extensions, then the remaining settings (one
// reload). Settings of a library, such as auto_explain.*, are unknown to the
// server until the library is loaded, which is why the order matters. On
// error, what was already applied is reverted.
func (s *Server) Apply(ctx context.Context, o observer.Observer) (_ engine.Applied, err error) {
	o = s.withSinkDir(o)
	a := &Applied{s: s, obs: o, changes: engine.NewChanges[change](s.journal)}
	if o.Name == observer.Baseline || (len(o.Preload) == 0 && len(o.Extensions) == 0 && len(o.Settings) == 0 && len(o.EnableSQL) == 0 && o.Sink == nil && o.Consumer == nil && o.Poller == nil) {
		return a, nil
	}
	conn, err := s.connect(ctx)
	if err != nil {
		return nil, err
	}
	defer engine.RevertIfFailed(ctx, &err, a.Revert)
	defer func() {
		if conn != nil {
			conn.Close(context.WithoutCancel(ctx))
		}
	}()
	if err := checkRequirements(ctx, conn, o); err != nil {
		return nil, err
	}
	if err := a.openSink(ctx, o); err != nil {
		return nil, err
	}

	plan, err := planChanges(ctx, conn, o)
	if err != nil {
		return nil, err
	}
	restartNames, later := plan.restart, plan.reload
	if len(restartNames) > 0 && s.restart == nil {
		return nil, &engine.RestartError{Observer: o.Name, Settings: restartNames, Needs: pgRestart}
	}
	for _, name := range restartNames {
		if err := a.set(ctx, conn, name, plan.value(o, name), true); err != nil {
			return nil, err
		}
	}
	if len(restartNames) > 0 {
		conn.Close(ctx)
		conn = nil
		if err := s.restart(ctx); err != nil {
			return nil, fmt.Errorf("restart for %s: %w", o.Name, err)
		}
		if conn, err = s.connect(ctx); err != nil {
			return nil, err
		}
	}
	if err := a.createExtensions(ctx, conn, o.Extensions); err != nil {
		return nil, err
	}
	for _, name := range later {
		if err := a.set(ctx, conn, name, o.Settings[name], false); err != nil {
			return nil, err
		}
	}
	if len(later) > 0 {
		if err := waitReload(ctx, conn, s.dsn); err != nil {
			return nil, err
		}
	}
	if err := a.enableSQL(ctx, conn, o); err != nil {
		return nil, err
	}
	if err := a.startConsumer(ctx, o); err != nil {
		return nil, err
	}
	stop, err := poller.For(ctx, s.Dial, o)
	if err != nil {
		return nil, err
	}
	a.poller.Set(stop)
	return a, fileErrors(ctx, conn)
}

// createExtensions creates each extension not there yet, journaled
// first.
func (a *Applied) createExtensions(ctx context.Context, conn *pgx.Conn, exts []string) error {
	for _, ext := range exts {
		var exists bool
		if err := conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = $1)", ext).Scan(&exists); err != nil {
			return fmt.Errorf("check extension %s: %w", ext, err)
		}
		if exists {
			continue
		}
		if err := a.record(change{Ext: ext}); err != nil {
			return err
		}
		if _, err := conn.Exec(ctx, "CREATE EXTENSION "+pgx.Identifier{ext}.Sanitize()); err != nil {
			return fmt.Errorf("create extension %s: %w", ext, err)
		}
	}
	return nil
}

// enableSQL runs o's enabling statements, its disabling ones journaled
// first.
func (a *Applied) enableSQL(ctx context.Context, conn *pgx.Conn, o observer.Observer) error {
	if len(o.EnableSQL) == 0 {
		return nil
	}
	if err := a.record(change{SQL: o.DisableSQL}); err != nil {
		return err
	}
	for _, stmt := range o.EnableSQL {
		if _, err := conn.Exec(ctx, stmt); err != nil {
			return fmt.Errorf("enable %s: %s: %w", o.Name, stmt, err)
		}
	}
	return nil
}

// Check fails when o cannot be applied to this server: a library it needs
// is not installed, or it needs a restart and the server is not obsbench's
// to restart. Nothing is changed.
func (s *Server) Check(ctx context.Context, o observer.Observer) error {
	conn, err := s.connect(ctx)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	if err := checkRequirements(ctx, conn, o); err != nil {
		return err
	}
	if o.Sink != nil && s.host == nil {
		return &engine.SinkError{Observer: o.Name, Sink: *o.Sink}
	}
	if s.restart != nil {
		return nil
	}
	plan, err := planChanges(ctx, conn, o)
	if err != nil {
		return err
	}
	if len(plan.restart) > 0 {
		return &engine.RestartError{Observer: o.Name, Settings: plan.restart, Needs: pgRestart}
	}
	return nil
}

// changePlan is what putting an observer in force changes on the server as
// it is now: the settings that need a restart (shared_preload_libraries
// first, when the observer adds a library to it) and those a reload
// changes. A setting already at the observer's value is in neither.
type changePlan struct {
	restart, reload []string
	libs            string            // shared_preload_libraries with the observer's libraries
	values          map[string]string // every setting's current value
}

func planChanges(ctx context.Context, conn *pgx.Conn, o observer.Observer) (changePlan, error) {
	var p changePlan
	libs, preloadChanged, err := mergedPreload(ctx, conn, o.Preload)
	if err != nil {
		return p, err
	}
	contexts, values, err := settingState(ctx, conn)
	if err != nil {
		return p, err
	}
	p.libs, p.values = libs, values
	if preloadChanged {
		p.restart = append(p.restart, "shared_preload_libraries")
	}
	for _, name := range toChange(o, values) {
		if contexts[name] == "postmaster" {
			p.restart = append(p.restart, name)
		} else {
			p.reload = append(p.reload, name)
		}
	}
	return p, nil
}

// value is what setting name is set to for o.
func (p changePlan) value(o observer.Observer, name string) string {
	if name == "shared_preload_libraries" {
		return p.libs
	}
	return o.Settings[name]
}

// set changes one setting with ALTER SYSTEM, first recording the value it
// had in postgresql.auto.conf so that Revert restores exactly that.
func (a *Applied) set(ctx context.Context, conn *pgx.Conn, name, value string, restart bool) error {
	var prior *string
	err := conn.QueryRow(ctx, `SELECT setting FROM pg_file_settings
		WHERE name = $1 AND sourcefile LIKE '%/postgresql.auto.conf' ORDER BY seqno DESC LIMIT 1`, name).Scan(&prior)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("read prior value of %s: %w", name, err)
	}
	if err := a.record(change{Setting: name, Prior: prior, Restart: restart}); err != nil {
		return err
	}
	if _, err := conn.Exec(ctx, fmt.Sprintf("ALTER SYSTEM SET %s = %s", name, settingValue(name, value))); err != nil {
		return fmt.Errorf("set %s = %s: %w", name, value, err)
	}
	return nil
}

// record journals c, when the server has a journal, and adds it to the
// changes Revert undoes, before the change is made.
func (a *Applied) record(c change) error {
	c.Engine = "postgres"
	return a.changes.Record(c)
}

// Revert undoes the changes in reverse order: library settings while the
// library is still loaded, then extensions, then restart-only settings with
// one restart.
func (a *Applied) Revert(ctx context.Context) (err error) {
	defer a.sink.CloseAfter(&err)
	// The poller's sessions and the consumer's slot go first: a server
	// whose wal_level is lowered again does not start with a logical slot.
	if a.poller.CloseAfter(&err); err != nil {
		return err
	}
	if a.consumer.CloseAfter(&err); err != nil {
		return err
	}
	if a.changes.Len() == 0 {
		return nil
	}
	conn, err := a.s.connect(ctx)
	if err != nil {
		return err
	}
	defer func() { conn.Close(ctx) }()
	// Every step is tried even when one fails, and the server reloads or
	// restarts whatever happened, so that a failure leaves as little
	// changed as possible; the failed steps stay for another Revert.
	undone, err := a.changes.Undo(func(c change) error { return a.undo(ctx, conn, c) })
	errs := []error{err}
	reload, restart := false, false
	for _, c := range undone {
		if c.Setting != "" {
			restart = restart || c.Restart
			reload = reload || !c.Restart
		}
	}
	if restart && a.s.restart != nil {
		conn.Close(ctx)
		if err := a.s.restart(ctx); err != nil {
			return errors.Join(append(errs, fmt.Errorf("restart to revert %s: %w", a.obs.Name, err))...)
		}
		if conn, err = a.s.connect(ctx); err != nil {
			return errors.Join(append(errs, err)...)
		}
	} else if reload {
		if err := waitReload(ctx, conn, a.s.dsn); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(append(errs, fileErrors(ctx, conn))...)
}

// undo undoes one change.
func (a *Applied) undo(ctx context.Context, conn *pgx.Conn, c change) error {
	switch {
	case c.SQL != nil:
		for _, stmt := range c.SQL {
			if _, err := conn.Exec(ctx, stmt); err != nil {
				return fmt.Errorf("disable %s: %s: %w", a.obs.Name, stmt, err)
			}
		}
	case c.Ext != "":
		if _, err := conn.Exec(ctx, "DROP EXTENSION IF EXISTS "+pgx.Identifier{c.Ext}.Sanitize()); err != nil {
			return fmt.Errorf("drop extension %s: %w", c.Ext, err)
		}
	default:
		stmt := "ALTER SYSTEM RESET " + c.Setting
		if c.Prior != nil {
			stmt = fmt.Sprintf("ALTER SYSTEM SET %s = %s", c.Setting, settingValue(c.Setting, *c.Prior))
		}
		if _, err := conn.Exec(ctx, stmt); err != nil {
			return fmt.Errorf("revert %s: %w", c.Setting, err)
		}
	}
	return nil
}

// Observer is the observer that was applied.
func (a *Applied) Observer() observer.Observer { return a.obs }

func mergedPreload(ctx context.Context, conn *pgx.Conn, want []string) (string, bool, error) {
	var cur string
	if err := conn.QueryRow(ctx, "SHOW shared_preload_libraries").Scan(&cur); err != nil {
		return "", false, fmt.Errorf("read shared_preload_libraries: %w", err)
	}
	var libs []string
	for _, l := range strings.Split(cur, ",") {
		if l = strings.Trim(strings.TrimSpace(l), `"`); l != "" {
			libs = append(libs, l)
		}
	}
	changed := false
	for _, w := range want {
		if !slices.Contains(libs, w) {
			libs = append(libs, w)
			changed = true
		}
	}
	return strings.Join(libs, ","), changed, nil
}

func settingContexts(ctx context.Context, conn *pgx.Conn) (map[string]string, error) {
	contexts, _, err := settingState(ctx, conn)
	return contexts, err
}

// settingState returns every setting's context and current value.
func settingState(ctx context.Context, conn *pgx.Conn) (contexts, values map[string]string, err error) {
	rows, err := conn.Query(ctx, "SELECT name, context, coalesce(setting, '') FROM pg_settings")
	if err != nil {
		return nil, nil, fmt.Errorf("read pg_settings: %w", err)
	}
	contexts, values = map[string]string{}, map[string]string{}
	var name, c, v string
	_, err = pgx.ForEachRow(rows, []any{&name, &c, &v}, func() error { contexts[name], values[name] = c, v; return nil })
	return contexts, values, err
}

// toChange lists o's settings that differ from the server's values: one
// already in force is left alone (no change, nothing to revert, and no
// restart for a logging_collector that is already on).
func toChange(o observer.Observer, values map[string]string) []string {
	var out []string
	for _, name := range o.SettingNames() {
		if cur, ok := values[name]; !ok || cur != o.Settings[name] {
			out = append(out, name)
		}
	}
	return out
}

// fileErrors reports settings the server could not apply from its files.
func fileErrors(ctx context.Context, conn *pgx.Conn) error {
	rows, err := conn.Query(ctx, "SELECT sourcefile || ':' || sourceline || ': ' || coalesce(name, '') || ': ' || error FROM pg_file_settings WHERE error IS NOT NULL")
	if err != nil {
		return fmt.Errorf("read pg_file_settings: %w", err)
	}
	msgs, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return err
	}
	if len(msgs) > 0 {
		return fmt.Errorf("server rejected settings: %s", strings.Join(msgs, "; "))
	}
	return nil
}

// checkRequirements verifies that each library o needs is in the server's
// library directory, and says which package installs it when not.
func checkRequirements(ctx context.Context, conn *pgx.Conn, o observer.Observer) error {
	if len(o.Requires) == 0 {
		return nil
	}
	var libdir, num string
	if err := conn.QueryRow(ctx, "SELECT setting FROM pg_config WHERE name = 'PKGLIBDIR'").Scan(&libdir); err != nil {
		return fmt.Errorf("find library directory: %w", err)
	}
	if err := conn.QueryRow(ctx, "SHOW server_version_num").Scan(&num); err != nil {
		return err
	}
	if _, err := os.Stat(libdir); err != nil {
		// Not this machine's server: let the server itself complain on load.
		return nil
	}
	major := strings.TrimLeft(num[:len(num)-4], "0")
	for _, r := range o.Requires {
		if _, err := os.Stat(filepath.Join(libdir, r.Library+".so")); err != nil {
			return &engine.MissingError{Observer: o.Name, Library: r.Library, Package: r.PackageFor(major)}
		}
	}
	return nil
}

// Split divides o into what needs a restart (preload libraries, extensions,
// settings of context postmaster) and what a reload switches (the rest), so
// that the switchable part can be turned on and off while the workload runs.
// The events counter goes with the switchable part, which is what records.
// A setting with an AlternateOff value is held at that value, so that
// switching it off does not fall back to a default that still records.
// switched has no settings when nothing of o can be switched.
func (s *Server) Split(ctx context.Context, o observer.Observer) (held, switched observer.Observer, err error) {
	o = s.withSinkDir(o)
	if len(o.Settings) == 0 {
		held, switched = observer.Split(o, nil)
		return held, switched, nil
	}
	conn, err := s.connect(ctx)
	if err != nil {
		return held, switched, err
	}
	defer conn.Close(ctx)
	contexts, err := settingContexts(ctx, conn)
	if err != nil {
		return held, switched, err
	}
	// A library's settings are unknown until it is loaded; they are all
	// reloadable in the catalog's libraries.
	held, switched = observer.Split(o, func(name string) bool { return contexts[name] == "postmaster" })
	return held, switched, nil
}

// startOnly are the settings of the catalog that PostgreSQL reads only at
// server start (context postmaster): "This parameter can only be set at
// server start" in the documentation of logging_collector,
// shared_preload_libraries and wal_level (runtime-config-logging.html,
// runtime-config-client.html, runtime-config-wal.html, PostgreSQL 15).
// Every other setting the catalog uses takes a reload (sighup) or less.
// TestStaticSplit checks the list against a server's pg_settings.
var startOnly = map[string]bool{"logging_collector": true, "shared_preload_libraries": true, "wal_level": true}

// StartOnly says whether setting is read only at server start
// (engine.Restarter).
func (Engine) StartOnly(setting string) bool { return startOnly[setting] }

// StaticSplit is Split without a server, from the documented contexts:
// what `obsbench observers -v` says of each observer before any server is
// reached (engine.Splitter).
func (Engine) StaticSplit(o observer.Observer) (held, switched observer.Observer) {
	return observer.Split(o, func(name string) bool { return startOnly[name] })
}

// Undo undoes changes as Apply journaled them (JSON), newest first, then
// reloads, or restarts when a change needs it and the server may be
// restarted: what `obsbench restore` does after obsbench was killed.
// Undoing is idempotent: each change sets a setting back to its recorded
// prior value or drops an extension if it exists. needsRestart reports
// changes that take effect only after a restart obsbench may not do.
func (s *Server) Undo(ctx context.Context, changes []json.RawMessage) (needsRestart []string, err error) {
	cs, err := engine.Journaled[change](s.journal, changes)
	if err != nil {
		return nil, err
	}
	for _, c := range cs.Pending() {
		if c.Restart && s.restart == nil {
			needsRestart = append(needsRestart, c.Setting)
		}
	}
	a := &Applied{s: s, obs: observer.Observer{Name: "the journaled changes"}, changes: cs}
	return needsRestart, a.Revert(ctx)
}
