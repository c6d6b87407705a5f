package dataset

// The tables pgbench -i makes at scale 1 (src/bin/pgbench/pgbench.c,
// initCreateTables and initGenerateDataClientSide): one branch, ten
// tellers and 100,000 accounts per scale unit, every balance 0, the
// fillers blank. pgbench_history starts empty and takes NULLs, which a
// dataset's NOT NULL columns do not: the pgbench workload creates it.
const (
	pgbenchTellers  = 10
	pgbenchAccounts = 100000
)

func pgbenchAt(scale int) Dataset {
	return Dataset{
		Name:        "pgbench",
		Description: "pgbench -i's tables: pgbench_branches (1 row per scale unit), pgbench_tellers (10), pgbench_accounts (100,000)",
		Tables: []Table{
			{
				Name:       "pgbench_branches",
				Columns:    []Column{{"bid", "int"}, {"bbalance", "int"}, {"filler", "char(88)"}},
				PrimaryKey: "bid",
				Rows:       scale,
				Row:        func(i int) []any { return []any{int32(i + 1), int32(0), ""} },
			},
			{
				Name:       "pgbench_tellers",
				Columns:    []Column{{"tid", "int"}, {"bid", "int"}, {"tbalance", "int"}, {"filler", "char(84)"}},
				PrimaryKey: "tid",
				Rows:       pgbenchTellers * scale,
				Row: func(i int) []any {
					return []any{int32(i + 1), int32(i/pgbenchTellers + 1), int32(0), ""}
				},
			},
			{
				Name:       "pgbench_accounts",
				Columns:    []Column{{"aid", "int"}, {"bid", "int"}, {"abalance", "int"}, {"filler", "char(84)"}},
				PrimaryKey: "aid",
				Rows:       pgbenchAccounts * scale,
				Row: func(i int) []any {
					return []any{int32(i + 1), int32(i/pgbenchAccounts + 1), int32(0), ""}
				},
			},
		},
		Scale: pgbenchAt,
	}
}

func init() { register(pgbenchAt(1)) }
