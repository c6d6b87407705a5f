package pgbench

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// A Script is a parsed pgbench script: its commands in order.
type Script struct {
	Name     string
	Commands []Command
}

// CommandKind says what a command does.
type CommandKind int

const (
	SQL   CommandKind = iota // a statement sent to the server
	Set                      // \set name expr
	Sleep                    // \sleep n [us|ms|s]
	If                       // \if expr
	Elif                     // \elif expr
	Else                     // \else
	Endif                    // \endif
)

// Command is one command of a script.
type Command struct {
	Kind CommandKind
	Line int // where it starts in the file, 1-based
	// SQL: the statement with pgbench's placeholders replaced by $1, $2,
	// ... (prepared, as pgbench -M prepared), the variable of each, and
	// what \gset or \aset stores the result under. Raw is the statement
	// as written, into which simple mode puts the variables' values.
	Text   string
	Params []string
	Raw    string
	Gset   *Gset
	// Set: the variable; Set, If, Elif: the expression.
	Var  string
	Expr *Expr
	// Sleep: the duration in microseconds, or the variable holding it
	// (multiplied by Unit).
	SleepUS  int64
	SleepVar string
	Unit     int64
}

// Gset is \gset (one row: each column into prefix+name) or \aset (every
// row; the last one's values stay).
type Gset struct {
	Prefix string
	All    bool
}

// ScriptError is a script pgbench would refuse, at file:line.
type ScriptError struct {
	File string
	Line int
	Msg  string
	// Text is the line at fault, echoed under the message with a caret
	// under column Col (from 1; 0: no caret), as pgbench shows a syntax
	// error; "" for none.
	Text string
	Col  int
}

func (e *ScriptError) Error() string {
	msg := fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	if e.Text == "" {
		return msg
	}
	msg += "\n    " + e.Text
	if e.Col > 0 {
		msg += "\n    " + strings.Repeat(" ", e.Col-1) + "^"
	}
	return msg
}

// ParseScript reads a script. Meta-commands pgbench runs through a shell
// (\shell, \setshell) and pipelines are refused: obsbench's sessions send
// one statement at a time and run nothing on this machine.
func ParseScript(file, text string) (*Script, error) {
	s := &Script{Name: file}
	fail := func(line int, format string, a ...any) error {
		return &ScriptError{File: file, Line: line, Msg: fmt.Sprintf(format, a...)}
	}
	lines := strings.Split(text, "\n")
	var pending pendingSQL
	emit := func(stmt string, line int) {
		raw := strings.TrimSpace(stmt)
		text, params := placeholders(raw)
		s.Commands = append(s.Commands, Command{Kind: SQL, Line: line, Text: text, Params: params, Raw: raw})
	}
	for n := 0; n < len(lines); n++ {
		line := lines[n]
		lineNo := n + 1
		if k := metaStart(pending.text.String()+line, pending.text.Len()); k > pending.text.Len() && !blank(line[:k-pending.text.Len()]) {
			// SQL, then a meta-command on the same line ("SELECT ... \gset").
			k -= pending.text.Len()
			if pending.line == 0 {
				pending.line = lineNo
			}
			pending.text.WriteString(line[:k])
			lines[n] = line[k:]
			n--
			continue
		}
		if strings.HasPrefix(strings.TrimSpace(line), `\`) {
			// A meta-command ends the SQL before it, ';' or not (as
			// pgbench: \gset and \aset are written in place of the ';').
			pending.flush(emit)
			// A meta-command takes the whole line, with \ continuations.
			for strings.HasSuffix(line, `\`) && n+1 < len(lines) {
				n++
				line = strings.TrimSuffix(line, `\`) + " " + lines[n]
			}
			words := strings.Fields(line)
			name := strings.ToLower(words[0][1:])
			rest := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), words[0]))
			if name == "gset" || name == "aset" {
				if len(s.Commands) == 0 || s.Commands[len(s.Commands)-1].Kind != SQL || s.Commands[len(s.Commands)-1].Gset != nil {
					return nil, fail(lineNo, `\%s must follow an SQL command`, name)
				}
				if len(words) > 2 {
					return nil, fail(lineNo, `\%s takes at most one argument, a prefix`, name)
				}
				prefix := ""
				if len(words) == 2 {
					prefix = words[1]
				}
				s.Commands[len(s.Commands)-1].Gset = &Gset{Prefix: prefix, All: name == "aset"}
				continue
			}
			c, err := metaCommand(name, words, rest, lineNo, fail)
			if se := (*SyntaxError)(nil); errors.As(err, &se) {
				return nil, exprError(file, lineNo, line, words[1], rest, se)
			}
			if err != nil {
				return nil, err
			}
			s.Commands = append(s.Commands, c)
			continue
		}
		pending.add(line, lineNo, emit)
	}
	pending.flush(emit) // pgbench sends a last statement without ';' too
	if err := link(s, fail); err != nil {
		return nil, err
	}
	return s, nil
}

// exprError is a \set expression's syntax error, placed in its line: the
// column counted from the line's start, the line echoed under it.
func exprError(file string, lineNo int, line, name, rest string, se *SyntaxError) error {
	text := strings.ReplaceAll(line, "\t", " ") // one column each, as the caret counts
	expr := strings.TrimSpace(strings.TrimPrefix(rest, name))
	col := 0
	if at := strings.Index(text, expr); at >= 0 && expr != "" {
		col = at + se.Col + 1
	}
	msg := se.Msg
	if se.More != "" {
		msg += " (" + se.More + ")"
	}
	if col > 0 {
		msg += fmt.Sprintf(" at column %d", col)
	}
	return &ScriptError{File: file, Line: lineNo, Msg: fmt.Sprintf("\\set %s: %s", name, msg), Text: text, Col: col}
}

func metaCommand(name string, words []string, rest string, line int, fail func(int, string, ...any) error) (Command, error) {
	c := Command{Line: line}
	switch name {
	case "set":
		if len(words) < 3 {
			return c, fail(line, `missing argument in command "set": \set name expression`)
		}
		if !ValidName(words[1]) {
			return c, fail(line, `invalid variable name: %q (a letter or _, then letters, digits or _)`, words[1])
		}
		c.Kind, c.Var = Set, words[1]
		x, err := ParseExpr(strings.TrimSpace(strings.TrimPrefix(rest, words[1])))
		if se := (*SyntaxError)(nil); errors.As(err, &se) {
			return c, se // placed in its line by ParseScript (exprError)
		}
		if err != nil {
			return c, fail(line, "\\set %s: %v", words[1], err)
		}
		c.Expr = x
	case "sleep":
		if len(words) < 2 || len(words) > 3 {
			return c, fail(line, `\sleep takes a number or :variable and a unit (us, ms or s; default s)`)
		}
		c.Kind, c.Unit = Sleep, 1000000
		if len(words) == 3 {
			switch strings.ToLower(words[2]) {
			case "us":
				c.Unit = 1
			case "ms":
				c.Unit = 1000
			case "s":
			default:
				return c, fail(line, `\sleep unit %q is not one of us, ms, s`, words[2])
			}
		}
		if v, ok := strings.CutPrefix(words[1], ":"); ok {
			c.SleepVar = v
		} else if n, err := strconv.ParseInt(words[1], 10, 64); err == nil && n >= 0 {
			c.SleepUS = n * c.Unit
		} else {
			return c, fail(line, `\sleep %q: a whole number or a :variable`, words[1])
		}
	case "if", "elif":
		c.Kind = If
		if name == "elif" {
			c.Kind = Elif
		}
		if rest == "" {
			return c, fail(line, `\%s needs a condition`, name)
		}
		x, err := ParseExpr(rest)
		if err != nil {
			return c, fail(line, "\\%s: %v", name, err)
		}
		c.Expr = x
	case "else", "endif":
		if len(words) > 1 {
			return c, fail(line, `\%s takes no argument`, name)
		}
		c.Kind = Else
		if name == "endif" {
			c.Kind = Endif
		}
	case "shell", "setshell":
		return c, fail(line, `\%s runs a shell command on the client: obsbench does not run commands from a workload (compute the value with \set, or define it with --define)`, name)
	case "startpipeline", "endpipeline", "syncpipeline":
		return c, fail(line, `\%s: pipelines are not supported; obsbench's sessions send one statement at a time`, name)
	default:
		return c, fail(line, `invalid command \%s (valid: \set, \sleep, \if, \elif, \else, \endif, \gset, \aset)`, name)
	}
	return c, nil
}

// link checks that \if, \elif, \else and \endif nest as pgbench
// requires; which branch runs is decided as the script runs.
func link(s *Script, fail func(int, string, ...any) error) error {
	type frame struct {
		line    int
		hasElse bool
	}
	var stack []frame
	for _, c := range s.Commands {
		switch c.Kind {
		case If:
			stack = append(stack, frame{line: c.Line})
		case Elif, Else:
			name := map[CommandKind]string{Elif: "elif", Else: "else"}[c.Kind]
			if len(stack) == 0 {
				return fail(c.Line, `\%s without a matching \if`, name)
			}
			if stack[len(stack)-1].hasElse {
				return fail(c.Line, `\%s after \else`, name)
			}
			stack[len(stack)-1].hasElse = c.Kind == Else
		case Endif:
			if len(stack) == 0 {
				return fail(c.Line, `\endif without a matching \if`)
			}
			stack = stack[:len(stack)-1]
		}
	}
	if len(stack) > 0 {
		return fail(stack[len(stack)-1].line, `\if without a matching \endif`)
	}
	return nil
}
