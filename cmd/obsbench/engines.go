package main

import (
	"github.com/obsbench/obsbench/internal/engine"
	"github.com/obsbench/obsbench/internal/spec"

	// The engines obsbench measures. Each registers itself with package
	// engine when imported; the rest of the command finds them by name or
	// by what they can do. Adding an engine is its own package under
	// internal/engine and one line here.
	_ "github.com/obsbench/obsbench/internal/engine/mariadb"
	_ "github.com/obsbench/obsbench/internal/engine/postgres"
	_ "github.com/obsbench/obsbench/internal/engine/sqlserver"
)

// engineChoices names the registered engines that can do what can asks,
// as a flag's help lists them.
func engineChoices(can func(engine.Info) bool) string {
	var names []string
	for _, i := range spec.EnginesWhere(can) {
		names = append(names, i.Name)
	}
	return spec.OneOf(names)
}

func anyEngine(engine.Info) bool { return true }

// externalOnly is what the help of --engine adds about engines obsbench
// cannot start a server of: " (sqlserver: external servers only, with
// --dsn)", or nothing.
func externalOnly() string {
	names := engine.NamesWhere(func(i engine.Info) bool { return !i.Managed })
	if len(names) == 0 {
		return ""
	}
	return " (" + spec.OneOf(names) + ": external servers only, with --dsn)"
}
