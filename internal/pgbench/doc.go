// Package pgbench reads and runs pgbench's script language, so that a
// DBA's own benchmark transactions can be a workload: expressions of
// \set (this file's siblings expr*.go, with pgbench's types, operators,
// functions and errors), and the pseudo-random generator pgbench uses
// (prng.go), whose outputs permute() depends on.
//
// The semantics follow pgbench's sources (src/bin/pgbench/exprparse.y,
// exprscan.l and evaluateExpr in pgbench.c, PostgreSQL 15 and later) and
// are checked against the installed pgbench itself (expr_test.go).
package pgbench
