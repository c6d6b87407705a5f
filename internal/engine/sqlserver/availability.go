package sqlserver

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/obsbench/obsbench/internal/observer"
	"github.com/obsbench/obsbench/internal/poll"
)

// What an availability-group observer changes follows "Differences between
// availability modes for an Always On availability group"
// (https://learn.microsoft.com/sql/database-engine/availability-groups/windows/availability-modes-always-on-availability-groups):
//   - "If the primary replica is configured for asynchronous-commit mode,
//     it does not wait for any secondary replica", and "for synchronous
//     commit to occur, both the current primary replica and the secondary
//     replica in question must be configured for synchronous commit": a
//     synchronous observer switches an asynchronous primary too, first.
//   - "If a given secondary replica is configured for asynchronous-commit
//     mode, the primary replica does not wait for that secondary replica":
//     an asynchronous observer switches the secondaries only.
//   - A secondary switched to synchronous commit is PARTIALLY_HEALTHY
//     "until all of its databases are in the SYNCHRONIZED synchronization
//     state", which it enters "as soon as every log record has been
//     hardened": until then commits do not wait for it as they will. So
//     the apply, and a revert that gives synchronous commit back, wait
//     for every synchronous secondary's copy of the dataset's database to
//     read SYNCHRONIZED in sys.dm_hadr_database_replica_states.

// availabilitySteps switches the commit mode of the replicas of the groups
// that hold the dataset's database to o's, and says what to wait for.
func availabilitySteps(o observer.Observer, env Env, replicas []Replica) ([]step, error) {
	if err := checkPrimary(o, replicas); err != nil {
		return nil, err
	}
	mode := groupOf(o).Mode
	var steps []step
	secondaries := 0
	for _, group := range groupsOf(replicas) {
		var switched []step
		for _, r := range inGroup(replicas, group) {
			// A configuration-only replica holds the group's metadata, no
			// data: its mode is CONFIGURATION_ONLY and is not a commit
			// mode to switch ("ALTER AVAILABILITY GROUP", AVAILABILITY_MODE).
			// https://learn.microsoft.com/sql/t-sql/statements/alter-availability-group-transact-sql
			if r.Mode == "CONFIGURATION_ONLY" {
				continue
			}
			if !r.Primary {
				secondaries++
			}
			if r.Mode == mode || r.Primary && mode != "SYNCHRONOUS_COMMIT" {
				continue
			}
			if mode == "ASYNCHRONOUS_COMMIT" && r.Failover == "AUTOMATIC" {
				return nil, fmt.Errorf("observer %s: replica %s of availability group %s fails over automatically, which needs synchronous commit; obsbench does not change failover modes", o.Name, r.Name, r.Group)
			}
			switched = append(switched, step{
				What: fmt.Sprintf("availability group %s replica %s mode", r.Group, r.Name),
				Do:   []string{ModifyReplicaSQL(r.Group, r.Name, mode)},
				Undo: []string{ModifyReplicaSQL(r.Group, r.Name, r.Mode)},
			})
		}
		if len(switched) == 0 {
			continue
		}
		// Replicas are listed by name; the primary goes first so that no
		// secondary is synchronous under an asynchronous primary.
		switched = primaryFirst(switched, inGroup(replicas, group))
		// Only a switch to synchronous commit has a catch-up to wait for:
		// the apply's of a synchronous observer, the revert's of an
		// asynchronous one (undone newest first: the first step's undo is
		// the last).
		if after := synchronousSecondaries(inGroup(replicas, group), mode); mode == "SYNCHRONOUS_COMMIT" && len(after) > 0 {
			switched[len(switched)-1].Wait = SynchronizedSQL(group, after, env.Database)
		}
		if before := synchronousSecondaries(inGroup(replicas, group), ""); mode != "SYNCHRONOUS_COMMIT" && len(before) > 0 {
			switched[0].UndoWait = SynchronizedSQL(group, before, env.Database)
		}
		steps = append(steps, switched...)
	}
	if secondaries == 0 {
		return nil, &NoAvailabilityGroupError{Observer: o.Name, Database: env.Database}
	}
	return steps, nil
}

// groupsOf lists the groups of replicas, in order.
func groupsOf(replicas []Replica) []string {
	var out []string
	for _, r := range replicas {
		if len(out) == 0 || out[len(out)-1] != r.Group {
			out = append(out, r.Group)
		}
	}
	return out
}

func inGroup(replicas []Replica, group string) []Replica {
	var out []Replica
	for _, r := range replicas {
		if r.Group == group {
			out = append(out, r)
		}
	}
	return out
}

// primaryFirst moves the step of the group's primary, if any, to the front.
func primaryFirst(steps []step, group []Replica) []step {
	for _, r := range group {
		if !r.Primary {
			continue
		}
		what := fmt.Sprintf("availability group %s replica %s mode", r.Group, r.Name)
		for i, st := range steps {
			if st.What == what {
				return append(append([]step{st}, steps[:i]...), steps[i+1:]...)
			}
		}
	}
	return steps
}

// synchronousSecondaries are the secondaries whose commits the primary
// waits for once the group's replicas are in mode ("": as they are now):
// none under an asynchronous primary.
func synchronousSecondaries(group []Replica, mode string) []string {
	modeOf := func(r Replica) string {
		if mode == "" || r.Mode == "CONFIGURATION_ONLY" || r.Primary && mode != "SYNCHRONOUS_COMMIT" {
			return r.Mode
		}
		return mode
	}
	var out []string
	for _, r := range group {
		if r.Primary && modeOf(r) != "SYNCHRONOUS_COMMIT" {
			return nil
		}
	}
	for _, r := range group {
		if !r.Primary && modeOf(r) == "SYNCHRONOUS_COMMIT" {
			out = append(out, r.Name)
		}
	}
	return out
}

// SynchronizedSQL counts the named secondaries of group whose copy of
// database is not SYNCHRONIZED, a replica without a row among them: 0
// when the primary waits for each of them on every commit. Run on the
// primary, where sys.dm_hadr_database_replica_states "returns a row for
// each primary database and an additional row for the corresponding
// secondary database"; the database is found by its group_database_id,
// "identical on every replica to which this database is joined".
// https://learn.microsoft.com/sql/relational-databases/system-dynamic-management-views/sys-dm-hadr-database-replica-states-transact-sql
func SynchronizedSQL(group string, secondaries []string, database string) string {
	return fmt.Sprintf(`SELECT COUNT(*) FROM sys.availability_groups ag
JOIN sys.availability_replicas ar ON ar.group_id = ag.group_id
LEFT JOIN sys.dm_hadr_database_replica_states drs ON drs.replica_id = ar.replica_id
 AND drs.group_database_id IN (SELECT d.group_database_id FROM sys.availability_databases_cluster d WHERE d.group_id = ag.group_id AND d.database_name = %s)
WHERE ag.name = %s AND ar.replica_server_name IN (%s)
 AND (drs.synchronization_state_desc IS NULL OR drs.synchronization_state_desc <> N'SYNCHRONIZED')`,
		quoteString(database), quoteString(group), quoteList(secondaries))
}

// syncTimeout is how long a switch waits for the secondaries to catch up:
// how long depends on "how far the secondary database was behind the
// primary database" (availability modes, "How Synchronization Works on a
// Secondary Replica"); a replica that lags more is no replica to measure.
const syncTimeout = 5 * time.Minute

// syncPoll is how often the wait reads the replicas' state.
const syncPoll = time.Second

// waitSynchronized runs q on conn until it returns 0, or fails after
// syncTimeout: a run started sooner would measure the catch-up, not the
// commit mode.
func waitSynchronized(ctx context.Context, conn *sql.Conn, q string) error {
	return awaitZero(ctx, func() (int, error) {
		var n int
		if err := conn.QueryRowContext(ctx, q).Scan(&n); err != nil {
			return 0, fmt.Errorf("read the replicas' synchronization state: %w", err)
		}
		return n, nil
	}, syncTimeout, syncPoll)
}

// awaitZero calls behind every interval until it returns 0, an error, or
// timeout has passed.
func awaitZero(ctx context.Context, behind func() (int, error), timeout, interval time.Duration) error {
	n := 0
	done := func() (bool, error) {
		var err error
		n, err = behind()
		return n == 0 && err == nil, err
	}
	late := func() error {
		return fmt.Errorf("%d synchronous secondary replica(s) not SYNCHRONIZED after %s (PARTIALLY_HEALTHY: still hardening the log they lag by); a run now would measure their catch-up", n, timeout)
	}
	return poll.Until(ctx, timeout, interval, done, late)
}

// checkPrimary refuses a plan on an instance that is not the primary of
// every group it would change: ALTER AVAILABILITY GROUP ... MODIFY
// REPLICA is run on the primary replica
// (https://learn.microsoft.com/sql/t-sql/statements/alter-availability-group-transact-sql,
// "Supported only on the primary replica").
func checkPrimary(o observer.Observer, replicas []Replica) error {
	primaryHere := map[string]bool{}
	for _, r := range replicas {
		if r.Primary && r.Local {
			primaryHere[r.Group] = true
		}
	}
	for _, r := range replicas {
		if !primaryHere[r.Group] {
			return &NotPrimaryError{Observer: o.Name, Group: r.Group}
		}
	}
	return nil
}

// NotPrimaryError says the connected instance is not the primary of an
// availability group an observer would change.
type NotPrimaryError struct{ Observer, Group string }

func (e *NotPrimaryError) Error() string {
	return fmt.Sprintf("observer %s changes the commit mode of availability group %s, which only its primary replica can do: measure on the primary", e.Observer, e.Group)
}

// NoAvailabilityGroupError says an availability-group observer found no
// group with a secondary replica holding the dataset's database.
type NoAvailabilityGroupError struct{ Observer, Database string }

func (e *NoAvailabilityGroupError) Error() string {
	return fmt.Sprintf("observer %s needs an availability group with a secondary replica that holds database %s; there is none, and obsbench never creates one (add the database to an existing group whose primary is this server)", e.Observer, e.Database)
}
