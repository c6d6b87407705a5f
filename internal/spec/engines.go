package spec

import (
	"slices"

	"github.com/obsbench/obsbench/internal/engine"
)

// EnginesWhere are the registered engines that can do what can asks, the
// default engine first, then by name: the order help and errors list
// them in.
func EnginesWhere(can func(engine.Info) bool) []engine.Info {
	var out []engine.Info
	first := Default().Engine
	for _, name := range engine.NamesWhere(can) {
		if i := engine.InfoOf(name); name == first {
			out = slices.Insert(out, 0, i)
		} else {
			out = append(out, i)
		}
	}
	return out
}

// ProductsWhere names the engines of which can holds, as a message lists
// them.
func ProductsWhere(can func(engine.Info) bool) string {
	var ps []string
	for _, i := range EnginesWhere(can) {
		ps = append(ps, i.Product)
	}
	return OneOf(ps)
}
