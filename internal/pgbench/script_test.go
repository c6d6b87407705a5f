package pgbench

import (
	"errors"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/obsbench/obsbench/internal/engine/postgres"
	"github.com/obsbench/obsbench/internal/engine/servertest"
)

// The built-in scripts are pgbench's own, word for word: compared with
// what the installed pgbench shows (no server needed).
func TestBuiltinsArePgbenchs(t *testing.T) {
	servertest.SkipShort(t) // needs PostgreSQL's package, the second tier's
	bin, err := postgres.FindBin()
	if err != nil {
		t.Fatalf("PostgreSQL's binaries (make test installs them): %v", err)
	}
	for name, text := range Builtins {
		out, err := exec.Command(filepath.Join(bin, "pgbench"), "--show-script="+name).CombinedOutput()
		if err != nil {
			t.Fatalf("pgbench --show-script=%s: %v\n%s", name, err, out)
		}
		_, shown, _ := strings.Cut(string(out), "\n") // after the "-- name: <builtin: ...>" line
		if strings.TrimSpace(shown) != strings.TrimSpace(text) {
			t.Errorf("built-in %s differs from pgbench's:\n%s\nobsbench:\n%s", name, shown, text)
		}
		if _, err := Builtin(name); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestParseScript(t *testing.T) {
	s, err := ParseScript("t.sql", `-- a comment line
\set aid random(1, 100000 * :scale)
\set big \
  :aid * 2
BEGIN;
SELECT abalance, :aid::text, ':aid', "col:x"
  FROM pgbench_accounts -- :nota here
 WHERE aid = :aid; SELECT :big
\gset p_
\if :aid > 10
  \sleep 2 ms
\elif :aid = 1
  SELECT $$a;b$$ /* ; */;
\else
  \sleep :aid us
\endif
END;
UPDATE x SET y = 1`)
	checkCommands(t, s, err, []cmd{
		{Set, 2, "", nil}, {Set, 3, "", nil}, {SQL, 5, "BEGIN", nil},
		{SQL, 6, "SELECT abalance, $1::text, ':aid', \"col:x\"\n  FROM pgbench_accounts -- :nota here\n WHERE aid = $2", []string{"aid", "aid"}},
		{SQL, 8, "SELECT $1", []string{"big"}},
		{If, 10, "", nil}, {Sleep, 11, "", nil}, {Elif, 12, "", nil}, {SQL, 13, "SELECT $$a;b$$ /* ; */", nil},
		{Else, 14, "", nil}, {Sleep, 15, "", nil}, {Endif, 16, "", nil}, {SQL, 17, "END", nil}, {SQL, 18, "UPDATE x SET y = 1", nil},
	})
	if g := s.Commands[4].Gset; g == nil || g.Prefix != "p_" || g.All {
		t.Errorf("\\gset p_ on SELECT :big: %+v", g)
	}
	if c := s.Commands[6]; c.SleepUS != 2000 {
		t.Errorf("\\sleep 2 ms = %d us", c.SleepUS)
	}
	if c := s.Commands[10]; c.SleepVar != "aid" || c.Unit != 1 {
		t.Errorf("\\sleep :aid us = %+v", c)
	}
}

// Each script pgbench refuses is refused with its file and line.
func TestScriptErrors(t *testing.T) {
	cases := map[string]string{
		"\\set x 1 +\n":                       "t.sql:1: \\set x: syntax error",
		"SELECT 1;\n\\set\n":                  "t.sql:2: missing argument",
		"\\foo\n":                             "t.sql:1: invalid command \\foo",
		"\\shell ls\n":                        "t.sql:1: \\shell runs a shell command",
		"\\setshell v echo 1\n":               "t.sql:1: \\setshell runs a shell command",
		"\\gset\n":                            "t.sql:1: \\gset must follow an SQL command",
		"\\if true\nSELECT 1;\n":              "t.sql:1: \\if without a matching \\endif",
		"\\else\n":                            "t.sql:1: \\else without a matching \\if",
		"\\if 1\n\\else\n\\elif 2\n\\endif\n": "t.sql:3: \\elif after \\else",
		"\\endif\n":                           "t.sql:1: \\endif without a matching \\if",
		"\\sleep 1 h\n":                       "t.sql:1: \\sleep unit \"h\"",
		"\\set x foo(1)\n":                    "unexpected function name",
		"\\startpipeline\n":                   "pipelines are not supported",
		"SELECT 1;\n\n\\set y :x + 9223372036854775808\n": "t.sql:3: \\set y: bigint constant overflow",
	}
	for script, want := range cases {
		_, err := ParseScript("t.sql", script)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v; want an error containing %q", script, err, want)
		}
	}
}

// cmd is what the parse tests compare of a command.
type cmd struct {
	Kind   CommandKind
	Line   int
	Text   string
	Params []string
}

// checkCommands checks the script s, parsed with err, against want.
func checkCommands(t *testing.T, s *Script, err error, want []cmd) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	var got []cmd
	for _, c := range s.Commands {
		got = append(got, cmd{c.Kind, c.Line, c.Text, c.Params})
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("commands:\n%#v\nwant\n%#v", got, want)
	}
}

func TestParseSQLFile(t *testing.T) {
	s, err := ParseSQLFile("q.sql", "-- mine\nSELECT 1;\n\nSELECT 'a;b', $$c;d$$, arr[a:b]\n  FROM t;\nUPDATE t SET x = 1")
	checkCommands(t, s, err, []cmd{
		{SQL, 2, "-- mine\nSELECT 1", nil},
		{SQL, 4, "SELECT 'a;b', $$c;d$$, arr[a:b]\n  FROM t", nil},
		{SQL, 6, "UPDATE t SET x = 1", nil},
	})
	for _, bad := range []struct{ text, want string }{
		{"SELECT 1;\n\\set x 1\n", "q.sql:2: a meta-command in a SQL file"},
		{"-- nothing\n", "q.sql:1: no SQL statement in the file"},
	} {
		if _, err := ParseSQLFile("q.sql", bad.text); err == nil || !strings.HasPrefix(err.Error(), bad.want) {
			t.Errorf("ParseSQLFile(%q) = %v; want %q", bad.text, err, bad.want)
		}
	}
}

// A \set expression's syntax error names its column in the line, and
// echoes the line with a caret under it, as pgbench does.
func TestScriptErrorPlacesTheColumn(t *testing.T) {
	_, err := ParseScript("t.sql", "SELECT 1;\n\\set  aid  random(1, )\n")
	var se *ScriptError
	if !errors.As(err, &se) {
		t.Fatalf("err = %v; want a *ScriptError", err)
	}
	want := "t.sql:2: \\set aid: syntax error at column 22\n    \\set  aid  random(1, )\n    " + strings.Repeat(" ", 21) + "^"
	if err.Error() != want {
		t.Errorf("error:\n%s\nwant:\n%s", err, want)
	}
	if line := "\\set  aid  random(1, )"; se.Col < 1 || line[se.Col-1] != ')' {
		t.Errorf("column %d of %q; want the ')' that ends the missing argument", se.Col, line)
	}
}

// A statement's name keeps its whole text, its white space made single
// spaces, so that summary.json can be matched against the script.
func TestStatementNamesWhole(t *testing.T) {
	long := "SELECT 1 / (CASE WHEN $1 = 3 THEN 1 ELSE 0 END) AS wild_a,\n    2 AS wild_b, 3 AS wild_c FROM pgbench_accounts"
	sc, err := ParseSQLFile("dir/wild-a.sql", "SELECT 1;\n"+long+";\n")
	if err != nil {
		t.Fatal(err)
	}
	got := StatementNames([]Weighted{{Script: sc, Weight: 1}})
	want := "wild-a.sql:2 " + strings.Join(strings.Fields(long), " ")
	if len(got) != 2 || got[1] != want {
		t.Errorf("names %q; want the second %q", got, want)
	}
}
