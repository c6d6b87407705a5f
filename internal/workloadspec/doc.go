// Package workloadspec finds the workload a spec names: a registered
// generator, a replay of a capture, or the user's pgbench or SQL
// scripts. Every file is read and checked here, before anything starts,
// and a bad one is refused naming its flag (and file:line).
package workloadspec
