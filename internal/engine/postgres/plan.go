package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/obsbench/obsbench/internal/dataset"
	"github.com/obsbench/obsbench/internal/observer"
)

// PlanApply lists, without changing anything, the statements Apply would
// run to put o in force on the server as it is now, in order, and the
// statements that would revert them: what --dry-run prints.
func (s *Server) PlanApply(ctx context.Context, o observer.Observer) (apply, revert []string, err error) {
	o = s.withSinkDir(o)
	if o.Name == observer.Baseline {
		return nil, nil, nil
	}
	if err := s.Check(ctx, o); err != nil {
		return nil, nil, err
	}
	conn, err := s.connect(ctx)
	if err != nil {
		return nil, nil, err
	}
	defer conn.Close(ctx)
	libs, preloadChanged, err := mergedPreload(ctx, conn, o.Preload)
	if err != nil {
		return nil, nil, err
	}
	contexts, values, err := settingState(ctx, conn)
	if err != nil {
		return nil, nil, err
	}
	set := func(name, value string) {
		apply = append(apply, fmt.Sprintf("ALTER SYSTEM SET %s = %s", name, settingValue(name, value)))
		revert = append([]string{fmt.Sprintf("ALTER SYSTEM SET %s = %s  -- or RESET, as postgresql.auto.conf had it", name, settingValue(name, values[name]))}, revert...)
	}
	restart := false
	if preloadChanged {
		set("shared_preload_libraries", libs)
		restart = true
	}
	var later []string
	for _, name := range toChange(o, values) {
		if contexts[name] == "postmaster" {
			set(name, o.Settings[name])
			restart = true
		} else {
			later = append(later, name)
		}
	}
	if restart {
		apply = append(apply, "-- restart the server")
	}
	for _, ext := range o.Extensions {
		var exists bool
		if err := conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = $1)", ext).Scan(&exists); err != nil {
			return nil, nil, err
		}
		if !exists {
			id := pgx.Identifier{ext}.Sanitize()
			apply = append(apply, "CREATE EXTENSION "+id)
			revert = append([]string{"DROP EXTENSION IF EXISTS " + id}, revert...)
		}
	}
	for _, name := range later {
		set(name, o.Settings[name])
	}
	if len(later) > 0 {
		apply = append(apply, "SELECT pg_reload_conf()")
	}
	apply = append(apply, o.EnableSQL...)
	revert = append(append([]string{}, o.DisableSQL...), revert...)
	if len(revert) > 0 {
		if restart {
			revert = append(revert, "-- restart the server")
		} else {
			revert = append(revert, "SELECT pg_reload_conf()")
		}
	}
	return apply, revert, nil
}

// PlanLoad lists the statements Load would run, or none when the dataset
// is already there. It fails as Load would on tables or a schema that are
// not obsbench's.
func (s *Server) PlanLoad(ctx context.Context, d dataset.Dataset) ([]string, error) {
	if err := s.Verify(ctx, d); err == nil {
		return nil, nil
	}
	conn, err := s.connect(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Close(ctx)
	var out []string
	if s.schema != "" {
		var comment *string
		err := conn.QueryRow(ctx, "SELECT obj_description(oid, 'pg_namespace') FROM pg_namespace WHERE nspname = $1", s.schema).Scan(&comment)
		switch {
		case err == pgx.ErrNoRows:
			id := pgx.Identifier{s.schema}.Sanitize()
			out = append(out, "CREATE SCHEMA "+id, "COMMENT ON SCHEMA "+id+" IS "+quoteLiteral(schemaComment))
		case err != nil:
			return nil, err
		case comment == nil || *comment != schemaComment:
			return nil, fmt.Errorf("schema %s exists and was not created by obsbench; obsbench keeps its dataset in a schema of its own and never writes into another", s.schema)
		}
	}
	for _, t := range d.Tables {
		var exists bool
		if err := conn.QueryRow(ctx, "SELECT to_regclass($1) IS NOT NULL", s.qualified(t.Name)).Scan(&exists); err != nil {
			return nil, err
		}
		if exists {
			return nil, fmt.Errorf("table %s exists but does not hold dataset %s; obsbench never overwrites a table: drop it, or use an empty database", s.qualified(t.Name), d.Name)
		}
		out = append(out, t.CreateSQL(), fmt.Sprintf("COPY %s FROM STDIN  -- %d generated rows", s.qualified(t.Name), t.Rows))
		out = append(out, t.IndexSQL()...)
		out = append(out, "VACUUM (ANALYZE) "+s.qualified(t.Name))
	}
	return out, nil
}
