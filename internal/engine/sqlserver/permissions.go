package sqlserver

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/obsbench/obsbench/internal/engine"
	"github.com/obsbench/obsbench/internal/observer"
)

// Permission is one permission a run needs: as a DBA would grant it, the
// T-SQL expression that is 1 when the login has it (HAS_PERMS_BY_NAME
// counts permissions implied by broader ones), and what needs it.
// https://learn.microsoft.com/sql/t-sql/functions/has-perms-by-name-transact-sql
type Permission struct {
	Grant, Check, Why string
}

// What each kind of work needs, from the documentation of the statement
// obsbench runs for it:
//   - CREATE EVENT SESSION / ALTER / DROP: ALTER ANY EVENT SESSION
//     (learn.microsoft.com/sql/t-sql/statements/create-event-session-transact-sql#permissions)
//   - sp_trace_create and the other sp_trace_* procedures: ALTER TRACE
//     (learn.microsoft.com/sql/relational-databases/system-stored-procedures/sp-trace-create-transact-sql#permissions);
//     so does reading sys.traces, which every run does (the settings
//     compared before and after each run, inspect): without it the select
//     fails with Msg 8189 "You do not have permission to run
//     'SYS.TRACES'". The sys.traces page gives only the catalog views'
//     general visibility rule; its siblings say it outright:
//     fn_trace_getinfo and fn_trace_gettable "Requires ALTER TRACE
//     permission on the server"
//     (learn.microsoft.com/sql/relational-databases/system-functions/sys-fn-trace-getinfo-transact-sql#permissions).
//   - sys.dm_os_performance_counters, sys.dm_os_wait_stats,
//     sys.dm_exec_requests of other sessions, sys.dm_xe_*, sys.dm_hadr_*:
//     VIEW SERVER STATE
//     (learn.microsoft.com/sql/relational-databases/system-dynamic-management-views/sys-dm-os-wait-stats-transact-sql#permissions);
//     from SQL Server 2022 on, the pages of these views say "For SQL
//     Server 2022 (16.x) and later versions, requires VIEW SERVER
//     PERFORMANCE STATE permission on the server", a narrower permission
//     that VIEW SERVER STATE implies: either will do there
//     (sys-dm-exec-session-wait-stats-transact-sql,
//     sys-dm-hadr-database-replica-states-transact-sql,
//     sys-server-event-session-events-transact-sql#permissions). Before
//     2022 that permission does not exist, so its check is asked only of
//     version 16 or later.
//   - CREATE DATABASE: CREATE DATABASE in master, CREATE ANY DATABASE or
//     ALTER ANY DATABASE (learn.microsoft.com/sql/t-sql/statements/create-database-transact-sql#permissions)
//   - ALTER AVAILABILITY GROUP ... MODIFY REPLICA: ALTER on the group,
//     implied by CONTROL on it and by ALTER ANY AVAILABILITY GROUP
//     (learn.microsoft.com/sql/t-sql/statements/alter-availability-group-transact-sql#permissions,
//     grant-availability-group-permissions-transact-sql)
var (
	permEventSession = Permission{"ALTER ANY EVENT SESSION", "HAS_PERMS_BY_NAME(NULL, NULL, 'ALTER ANY EVENT SESSION')", "creating Extended Events sessions"}
	permTrace        = Permission{"ALTER TRACE", "HAS_PERMS_BY_NAME(NULL, NULL, 'ALTER TRACE')", "reading sys.traces (every run) and creating server-side traces"}
	permServerState  = Permission{"VIEW SERVER STATE (SQL Server 2022 and later: or VIEW SERVER PERFORMANCE STATE)", serverStateCheck, "reading counters, waits and sessions' state"}
	permCreateDB     = Permission{"CREATE ANY DATABASE", "CASE WHEN HAS_PERMS_BY_NAME(NULL, NULL, 'CREATE ANY DATABASE') = 1 OR HAS_PERMS_BY_NAME(NULL, NULL, 'ALTER ANY DATABASE') = 1 OR HAS_PERMS_BY_NAME(N'master', 'DATABASE', 'CREATE DATABASE') = 1 THEN 1 ELSE 0 END", "creating the dataset's database"}
)

// serverStateCheck is 1 with VIEW SERVER STATE, or with VIEW SERVER
// PERFORMANCE STATE on SQL Server 2022 (16.x) or later.
const serverStateCheck = "CASE WHEN HAS_PERMS_BY_NAME(NULL, NULL, 'VIEW SERVER STATE') = 1 THEN 1 " +
	"WHEN CAST(SERVERPROPERTY('ProductMajorVersion') AS int) >= 16 AND HAS_PERMS_BY_NAME(NULL, NULL, 'VIEW SERVER PERFORMANCE STATE') = 1 THEN 1 ELSE 0 END"

// permAlterGroup is ALTER on availability group g.
func permAlterGroup(g string) Permission {
	return Permission{"ALTER ON AVAILABILITY GROUP::" + quoteName(g), fmt.Sprintf("HAS_PERMS_BY_NAME(%s, 'AVAILABILITY GROUP', 'ALTER')", quoteString(g)),
		"changing the commit mode of its replicas"}
}

// NeededPermissions are the permissions a run of observers needs: its
// collectors' and the settings snapshot's always (VIEW SERVER STATE,
// ALTER TRACE), the dataset's database when it is still to be created,
// and each observer's kind of object (an XE session, a commit-mode change
// of the groups holding the database; a trace needs ALTER TRACE, which
// every run already asks for).
func NeededPermissions(observers []observer.Observer, databaseExists bool, groups []string) []Permission {
	out := []Permission{permServerState, permTrace}
	if !databaseExists {
		out = append(out, permCreateDB)
	}
	var xe, ag bool
	for _, o := range observers {
		xe = xe || sessionOf(o) != nil
		ag = ag || groupOf(o) != nil
	}
	if xe {
		out = append(out, permEventSession)
	}
	if ag {
		for _, g := range groups {
			out = append(out, permAlterGroup(g))
		}
	}
	return out
}

// PermissionsSQL is one query that checks every permission of perms, a
// column each, in order.
func PermissionsSQL(perms []Permission) string {
	cols := make([]string, len(perms))
	for i, p := range perms {
		cols[i] = p.Check
	}
	return "SELECT " + strings.Join(cols, ",\n       ")
}

// CheckPermissions checks, before anything is changed, that the login
// has every permission a run of observers needs; it returns the query it
// ran and an *engine.PermissionError naming all that are missing.
func (s *Server) CheckPermissions(ctx context.Context, observers []observer.Observer) (string, error) {
	conn, done, err := s.control(ctx)
	if err != nil {
		return "", err
	}
	defer done()
	var exists bool
	if err := conn.QueryRowContext(ctx, "SELECT CASE WHEN DB_ID(@p1) IS NULL THEN 0 ELSE 1 END", s.database).Scan(&exists); err != nil {
		return "", fmt.Errorf("look for database %s: %w", s.database, err)
	}
	groups, err := s.groups(ctx, conn)
	if err != nil {
		return "", err
	}
	perms := NeededPermissions(observers, exists, groups)
	q := PermissionsSQL(perms)
	has := make([]sql.NullInt64, len(perms))
	dest := make([]any, len(perms))
	for i := range has {
		dest[i] = &has[i]
	}
	if err := conn.QueryRowContext(ctx, q).Scan(dest...); err != nil {
		return q, fmt.Errorf("check permissions: %w", err)
	}
	return q, missing(perms, has)
}

// missing is the error naming the permissions whose check was not 1.
func missing(perms []Permission, has []sql.NullInt64) error {
	var names, whys []string
	for i, p := range perms {
		if !has[i].Valid || has[i].Int64 != 1 {
			names = append(names, p.Grant)
			whys = append(whys, p.Why)
		}
	}
	if len(names) == 0 {
		return nil
	}
	return &engine.PermissionError{Missing: names, Why: strings.Join(whys, ", ") + " need"}
}

// groups are the availability groups that hold the dataset's database.
func (s *Server) groups(ctx context.Context, conn *sql.Conn) ([]string, error) {
	replicas, err := s.replicas(ctx, conn)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, r := range replicas {
		if len(out) == 0 || out[len(out)-1] != r.Group {
			out = append(out, r.Group)
		}
	}
	return out, nil
}
