// Package sqlserver is the SQL Server engine: an external server reached
// by DSN (microsoft/go-mssqldb), never a managed one, since SQL Server does
// not run here. Its observers are Extended Events sessions, server-side
// SQL Traces and an availability group's commit mode: catalog sections
// this package owns, decoded into its types (sections.go) and rendered
// as T-SQL (tsql.go); its collectors diff the server's cumulative
// wait statistics and performance counters. Everything it would run can
// be printed without running it (--dry-run), and the T-SQL is checked
// against golden files under testdata/.
package sqlserver
