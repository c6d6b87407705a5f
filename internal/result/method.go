package result

import "slices"

// Method is how an observer is compared with the baseline (--method): a
// spec chooses it, each run records the one it was measured by, and the
// analysis reads it back. The empty Method is a spec's "the run chooses".
type Method string

const (
	// MethodAuto measures each observer whole, and its switchable part
	// beside it: an observer with a part that stays in force (a preloaded
	// library, a setting that needs a restart) runs whole in rounds and
	// its switchable part in alternation; one that a reload switches
	// entirely alternates; one that no reload switches runs in rounds.
	MethodAuto Method = "auto"
	// MethodAlternation switches the observer on and off while the
	// workload runs and compares each on phase with its neighbours.
	MethodAlternation Method = "alternation"
	// MethodRounds runs the workload once per round with the observer in
	// force for the whole run, and compares runs with baseline runs.
	MethodRounds Method = "rounds"
	// MethodInstructions counts the server's user-space instructions per
	// statement under valgrind instead of timing it.
	MethodInstructions Method = "instructions"
	// MethodDuet runs two identical servers (twins) at the same time, the
	// observer in force in one of them, roles swapped phase by phase.
	MethodDuet Method = "duet"
	// MethodSplit drives one server with two equal groups of sessions at
	// the same time, the observer's per-session part set in the sessions
	// of one group, groups swapped phase by phase.
	MethodSplit Method = "split"
	// MethodSplitDuet runs a duet of twin servers and, on the first twin
	// at its share, a split of each observer beside it: the whole cost
	// and the per-session cost of the same observers on the same server,
	// their difference what all sessions share.
	MethodSplitDuet Method = "split,duet"
)

// Methods are the values --method takes, in the order its help and its
// errors list them.
var Methods = []Method{MethodAuto, MethodAlternation, MethodRounds, MethodInstructions, MethodDuet, MethodSplit, MethodSplitDuet}

// Valid says m is one of Methods.
func (m Method) Valid() bool { return slices.Contains(Methods, m) }

// Twins says m drives two twin servers at once.
func (m Method) Twins() bool { return m == MethodDuet || m == MethodSplitDuet }

// Paired says m's phases drive two sides at the same time, the observer
// in one (twin servers, or session groups on one server), and compare
// them phase by phase.
func (m Method) Paired() bool { return m == MethodDuet || m == MethodSplit || m == MethodSplitDuet }

// Splits says m splits sessions into groups on one server, alone or
// beside a duet.
func (m Method) Splits() bool { return m == MethodSplit || m == MethodSplitDuet }

// Counted says m counts instructions rather than timing the workload.
func (m Method) Counted() bool { return m == MethodInstructions }

// Alternates says m switches the observer on and off within one run.
func (m Method) Alternates() bool { return m == MethodAlternation }

// InRounds says m compares whole runs, each under one condition.
func (m Method) InRounds() bool { return m == MethodRounds }
