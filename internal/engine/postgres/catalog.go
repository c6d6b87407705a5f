package postgres

import (
	_ "embed"

	"github.com/obsbench/obsbench/internal/observer"
)

// catalog is the engine's built-in observers (observer.Builtin).
//
//go:embed catalog/postgres.yaml
var catalog []byte

func init() { observer.RegisterBuiltin("catalog/postgres.yaml", catalog) }
