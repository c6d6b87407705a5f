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
	plan, err := planChanges(ctx, conn, o)
	if err != nil {
		return nil, nil, err
	}
	set := func(name string) {
		apply = append(apply, fmt.Sprintf("ALTER SYSTEM SET %s = %s", name, settingValue(name, plan.value(o, name))))
		revert = append([]string{fmt.Sprintf("ALTER SYSTEM SET %s = %s  -- or RESET, as postgresql.auto.conf had it", name, settingValue(name, plan.values[name]))}, revert...)
	}
	for _, name := range plan.restart {
		set(name)
	}
	restart := len(plan.restart) > 0
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
	for _, name := range plan.reload {
		set(name)
	}
	if len(plan.reload) > 0 {
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
	create, err := s.schemaToCreate(ctx, conn)
	if err != nil {
		return nil, err
	}
	if create {
		id := pgx.Identifier{s.schema}.Sanitize()
		out = append(out, "CREATE SCHEMA "+id, "COMMENT ON SCHEMA "+id+" IS "+quoteLiteral(schemaComment))
	}
	if err := s.checkTablesFree(ctx, conn, d); err != nil {
		return nil, err
	}
	for _, t := range d.Tables {
		out = append(out, t.CreateSQL(), fmt.Sprintf("COPY %s FROM STDIN  -- %d generated rows", s.qualified(t.Name), t.Rows))
		out = append(out, t.IndexSQL()...)
		out = append(out, "VACUUM (ANALYZE) "+s.qualified(t.Name))
	}
	return out, nil
}
