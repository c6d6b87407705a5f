package dataset

import "strings"

// tab72Marker is the string study 5 set in one row's c3, which its range
// query looks for.
const tab72Marker = "Advanced SQL Server Performance Monitoring & Tuning Hands-on Workshop from SQLWorkshops.com"

func init() {
	filler := strings.Repeat("a", 2000)
	// nchar(2000) pads to its length; varchar(2000) holds the same
	// characters (MariaDB's char stops at 255), so the marker is padded.
	marker := tab72Marker + strings.Repeat(" ", 2000-len(tab72Marker))
	register(Dataset{
		Name:        "tab72",
		Description: "study 5's table tab72: c1 int primary key, c2 int, c3 of 2,000 characters; 50,000 rows, row 10,000 holding the marker",
		Tables: []Table{{
			Name:       "tab72",
			Columns:    []Column{{"c1", "int"}, {"c2", "int"}, {"c3", "varchar(2000)"}},
			PrimaryKey: "c1",
			Rows:       50_000,
			Row: func(i int) []any {
				c3 := filler
				if i+1 == 10_000 {
					c3 = marker
				}
				return []any{int32(i + 1), int32(i + 1), c3}
			},
		}},
	})
	// none is no data at all, for workloads that bring their own table
	// (study 4's inserts).
	register(Dataset{Name: "none", Description: "no tables: the workload's set-up creates what it writes"})
}
