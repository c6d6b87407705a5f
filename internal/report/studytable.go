package report

// StudyTable describes a study's own table: what the report shows of a
// study besides its results. Package study makes one from each built-in
// study (Study.Table); report renders from it, never from the study's code.
type StudyTable struct {
	Title, Question string
	// Rows are the set-ups in table order, the baseline first.
	Rows []StudyRow
	// Unmapped are set-ups of the original study with no analogue here.
	Unmapped []string
	// Matrix, for study 3, places each observer by target (row) and
	// variant (column); Columns are the variants in order.
	Matrix  []MatrixCell
	Columns []string
	// Commit names, for study 4, the engine's counters and wait of the
	// commit path.
	Commit CommitKeys
}

// StudyRow is one set-up: an observer and the original set-up it stands
// for.
type StudyRow struct {
	Observer string
	Original string
}

// MatrixCell is one observer of study 3's matrix.
type MatrixCell struct {
	Target, Variant, Observer string
}

// CommitKeys are the names under which an engine's counters (per second,
// or levels) and waits hold what study 4 reads.
type CommitKeys struct {
	Commits, Flushes, LogBytes string // counters
	Lag, LagLabel, LagNote     string // a level, in ms, and what it is
	Wait                       string // the wait for the replica
}

// The variants study 3's filtered-out round compares.
const (
	VariantAsIs        = "as is"
	VariantFilteredOut = "filtered out"
)
