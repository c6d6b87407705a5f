package sqlserver

import (
	_ "embed"

	"github.com/obsbench/obsbench/internal/observer"
)

// catalog is the engine's built-in observers (observer.Builtin).
//
//go:embed catalog/sqlserver.yaml
var catalog []byte

func init() { observer.RegisterBuiltin("catalog/sqlserver.yaml", catalog) }
