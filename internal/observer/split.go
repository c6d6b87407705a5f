package observer

// HeldSuffix ends the name of the part of an observer Split holds.
const HeldSuffix = "/held"

// Split divides o for alternation: held is what stays in force through a
// pair of runs (its preload, extensions, sink, the settings that take
// effect only at server start, and the off values of AlternateOff), and
// switched is what the runner turns on and off between the runs (the other
// settings, and EnableSQL and DisableSQL). startOnly says whether a
// setting takes effect only at server start; nil means none does. Which
// settings those are is the engine's knowledge, not the catalog's.
func Split(o Observer, startOnly func(name string) bool) (held, switched Observer) {
	held = Observer{Name: o.Name + HeldSuffix, Engine: o.Engine, Description: o.Description,
		Preload: o.Preload, Extensions: o.Extensions, Requires: o.Requires, Sink: o.Sink, Settings: map[string]string{}}
	switched = Observer{Name: o.Name, Engine: o.Engine, Description: o.Description,
		Events: o.Events, Settings: map[string]string{}, EnableSQL: o.EnableSQL, DisableSQL: o.DisableSQL}
	for name, v := range o.Settings {
		switch off, hasOff := o.AlternateOff[name]; {
		case startOnly != nil && startOnly(name):
			held.Settings[name] = v
		case hasOff:
			// Held at its off value; the switch sets v on top of it.
			held.Settings[name] = off
			switched.Settings[name] = v
		default:
			switched.Settings[name] = v
		}
	}
	return held, switched
}
