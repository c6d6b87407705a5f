package pgbench

import "strings"

// ParseSQLFile reads a file of plain SQL for --workload sql: statements
// separated by ';' (outside quotes, comments and dollar quotes), each a
// command sent as written, without parameters. A line that starts with a
// backslash is refused: meta-commands (pgbench's or psql's) are not SQL,
// and a file that uses them is a pgbench script.
func ParseSQLFile(file, text string) (*Script, error) {
	s := &Script{Name: file}
	var pending pendingSQL
	emit := func(stmt string, line int) {
		s.Commands = append(s.Commands, Command{Kind: SQL, Line: line, Text: strings.TrimSpace(stmt)})
	}
	for n, line := range strings.Split(text, "\n") {
		lineNo := n + 1
		if blank(pending.text.String()) && strings.HasPrefix(strings.TrimSpace(line), `\`) {
			return nil, &ScriptError{File: file, Line: lineNo, Msg: "a meta-command in a SQL file: " +
				"--workload sql sends statements as written; for \\set, \\if and :variables use --workload pgbench"}
		}
		pending.add(line, lineNo, emit)
	}
	pending.flush(emit)
	if len(s.Commands) == 0 {
		return nil, &ScriptError{File: file, Line: 1, Msg: "no SQL statement in the file"}
	}
	return s, nil
}
