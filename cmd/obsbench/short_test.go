package main

import (
	"testing"

	"github.com/obsbench/obsbench/internal/engine/servertest"
)

// needServers skips t under go test -short: t runs obsbench against real
// database servers (managed ones it starts, or ones servertest starts),
// which is the second tier of the tests; the first tier (-short) needs
// neither root nor a database package. Every such test calls it first,
// before any binary is looked for. Without -short it does nothing: a
// missing engine fails the test.
func needServers(t *testing.T) {
	t.Helper()
	servertest.SkipShort(t)
}
