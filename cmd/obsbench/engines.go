package main

// The engines obsbench measures. Each registers itself with package engine
// when imported; the rest of the command finds them by name. Adding an
// engine is its own package under internal/engine and one line here.
import (
	_ "github.com/obsbench/obsbench/internal/engine/mariadb"
	_ "github.com/obsbench/obsbench/internal/engine/postgres"
	_ "github.com/obsbench/obsbench/internal/engine/sqlserver"
)
