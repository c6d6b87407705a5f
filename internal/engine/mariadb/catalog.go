package mariadb

import (
	_ "embed"

	"github.com/obsbench/obsbench/internal/observer"
)

// catalog is the engine's built-in observers (observer.Builtin).
//
//go:embed catalog/mariadb.yaml
var catalog []byte

func init() { observer.RegisterBuiltin("catalog/mariadb.yaml", catalog) }
