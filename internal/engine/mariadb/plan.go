package mariadb

import (
	"context"

	"github.com/obsbench/obsbench/internal/observer"
)

// PlanApply lists, without changing anything, the statements Apply would
// run to put o in force on the server as it is now, in order, and those
// that would revert them: what --dry-run prints.
func (s *Server) PlanApply(ctx context.Context, o observer.Observer) (apply, revert []string, err error) {
	o = s.withSinkDir(o)
	if o.Name == observer.Baseline {
		return nil, nil, nil
	}
	conn, done, err := s.control(ctx)
	if err != nil {
		return nil, nil, err
	}
	defer done()
	plan, err := s.checkedPlan(ctx, conn, o)
	if err != nil {
		return nil, nil, err
	}
	for _, name := range plan.startup {
		apply = append(apply, "-- option file: "+name+" = "+o.Settings[name])
		revert = append([]string{"-- option file: " + name + " as it was"}, revert...)
	}
	if len(plan.startup) > 0 {
		apply = append(apply, "-- restart the server")
	}
	for _, lib := range plan.plugins {
		apply = append(apply, "INSTALL SONAME "+quoteLiteral(lib))
		revert = append([]string{"UNINSTALL SONAME " + quoteLiteral(lib)}, revert...)
	}
	for _, name := range plan.dynamic {
		apply = append(apply, setGlobalSQL(name, o.Settings[name]))
		prior := "its value then"
		if v, ok := plan.vars[name]; ok {
			prior = v.value
		}
		revert = append([]string{setGlobalSQL(name, prior)}, revert...)
	}
	apply = append(apply, o.EnableSQL...)
	revert = append(append([]string{}, o.DisableSQL...), revert...)
	if len(plan.startup) > 0 {
		revert = append(revert, "-- restart the server")
	}
	return apply, revert, nil
}
