package sqlserver

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
)

// Replica is one replica of an availability group that holds the
// dataset's database.
type Replica struct {
	Group, Name string
	Mode        string // SYNCHRONOUS_COMMIT, ASYNCHRONOUS_COMMIT (or CONFIGURATION_ONLY)
	Failover    string // AUTOMATIC, MANUAL, EXTERNAL
	Primary     bool
	// Local says the replica is the instance obsbench is connected to.
	Local bool
}

// replicasSQL lists the replicas of the groups that hold database @p1,
// with their role and whether each is the connected instance (is_local).
// https://learn.microsoft.com/sql/relational-databases/system-catalog-views/sys-availability-replicas-transact-sql
// https://learn.microsoft.com/sql/relational-databases/system-dynamic-management-views/sys-dm-hadr-availability-replica-states-transact-sql
const replicasSQL = `SELECT ag.name, ar.replica_server_name, ar.availability_mode_desc, ar.failover_mode_desc,
       CASE WHEN rs.role_desc = N'PRIMARY' THEN 1 ELSE 0 END, COALESCE(CAST(rs.is_local AS int), 0)
FROM sys.availability_groups ag
JOIN sys.availability_replicas ar ON ar.group_id = ag.group_id
LEFT JOIN sys.dm_hadr_availability_replica_states rs ON rs.replica_id = ar.replica_id
WHERE ag.group_id IN (SELECT d.group_id FROM sys.availability_databases_cluster d WHERE d.database_name = @p1)
ORDER BY ag.name, ar.replica_server_name`

// replicas detects the availability groups holding the dataset's
// database; none is the common case, and nothing is ever created.
func (s *Server) replicas(ctx context.Context, conn *sql.Conn) ([]Replica, error) {
	rows, err := conn.QueryContext(ctx, replicasSQL, s.database)
	if err != nil {
		return nil, fmt.Errorf("look for availability groups: %w", err)
	}
	defer rows.Close()
	var out []Replica
	for rows.Next() {
		var r Replica
		var primary, local int
		if err := rows.Scan(&r.Group, &r.Name, &r.Mode, &r.Failover, &primary, &local); err != nil {
			return nil, err
		}
		r.Primary, r.Local = primary == 1, local == 1
		out = append(out, r)
	}
	return out, rows.Err()
}

// settingsQueries are read before and after every run: each row is a
// setting's name and value. Reading sys.traces is why every run needs
// ALTER TRACE (NeededPermissions).
var settingsQueries = []struct{ what, sql string }{
	{"configuration", "SELECT name, CAST(value_in_use AS nvarchar(64)) FROM sys.configurations"},
	{"XE sessions", `SELECT N'xe session ' + es.name,
		CASE WHEN xs.name IS NULL THEN N'stopped' ELSE N'running' END
		FROM sys.server_event_sessions es LEFT JOIN sys.dm_xe_sessions xs ON xs.name = es.name`},
	{"traces", "SELECT N'trace ' + CAST(id AS nvarchar(12)) + N' ' + CASE WHEN is_default = 1 THEN N'(default trace)' ELSE COALESCE(path, N'(rowset)') END, CAST(status AS nvarchar(12)) FROM sys.traces"},
}

// Settings returns what an observer could leave changed, name to value:
// the server configuration (sys.configurations, value in use), every XE
// session defined and whether it runs, every trace and its status, and
// the commit mode of the dataset's availability-group replicas (the
// default trace by name: its path moves as it rolls over). The runner
// compares it before and after each run: a revert must give it back whole.
func (s *Server) Settings(ctx context.Context) (map[string]string, error) {
	conn, done, err := s.control(ctx)
	if err != nil {
		return nil, err
	}
	defer done()
	out := map[string]string{}
	read := func(what, q string, args ...any) error {
		rows, err := conn.QueryContext(ctx, q, args...)
		if err != nil {
			return fmt.Errorf("read %s: %w", what, err)
		}
		defer rows.Close()
		for rows.Next() {
			var k, v string
			if err := rows.Scan(&k, &v); err != nil {
				return err
			}
			out[k] = v
		}
		return rows.Err()
	}
	for _, q := range settingsQueries {
		if err := read(q.what, q.sql); err != nil {
			return nil, err
		}
	}
	replicas, err := s.replicas(ctx, conn)
	if err != nil {
		return nil, err
	}
	for _, r := range replicas {
		out["availability group "+r.Group+" replica "+r.Name] = r.Mode
	}
	return out, nil
}

// ChangedSettings are what a reader of a result needs to know of the
// server's standing: the XE sessions and traces that were running (the
// default trace, system_health and any of the user's). SQL Server does not
// say which configuration options differ from their defaults.
func (s *Server) ChangedSettings(ctx context.Context) (map[string]string, error) {
	all, err := s.Settings(ctx)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for k, v := range all {
		switch {
		case strings.HasPrefix(k, "xe session ") && v == "running":
			out[k] = v
		case strings.HasPrefix(k, "trace ") && v == "1":
			out[k] = "running"
		}
	}
	return out, nil
}
