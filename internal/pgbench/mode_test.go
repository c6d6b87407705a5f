package pgbench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/obsbench/obsbench/internal/engine/postgres"
	"github.com/obsbench/obsbench/internal/engine/servertest"
)

// Simple mode puts values into the text as pgbench's assignVariables
// does: anywhere (quotes and comments too), as they are, a name with no
// variable left alone, casts untouched, a value not scanned again.
func TestSubstitute(t *testing.T) {
	vars := map[string]string{"a": "5", "b_2": "x y", "n": "NULL", "d": "0.333333333333333", "loop": ":a", "é": "1"}
	for _, tt := range []struct{ in, want string }{
		{"SELECT :a + :b_2", "SELECT 5 + x y"},
		{"SELECT ':b_2', \":a\" -- :a", "SELECT 'x y', \"5\" -- 5"},
		{"SELECT :a::text, :nosuch, :a:a", "SELECT 5::text, :nosuch, 55"},
		{"SELECT :::a, ::a, :", "SELECT :::a, ::a, :"},
		{"SELECT :n IS NULL, :d", "SELECT NULL IS NULL, 0.333333333333333"},
		{"SELECT :loop", "SELECT :a"},
		{"SELECT :é, :a1", "SELECT 1, :a1"},
		{"no variables", "no variables"},
	} {
		if got := substitute(tt.in, vars); got != tt.want {
			t.Errorf("substitute(%q) = %q; want %q", tt.in, got, tt.want)
		}
	}
}

// modeScripts are run by the installed pgbench and by obsbench's client in
// each mode they list: deterministic (no random values), so that both
// send the same statements. From pgbench's documentation and tests:
// \gset with a prefix, \aset, variables in arithmetic, compared with each
// other, in a select list, a NULL and a double.
var modeScripts = []struct {
	name, text string
	modes      []QueryMode
}{
	{"arithmetic", "\\set a 5\n\\set b 7\nSELECT :a + :b;\n", QueryModes},
	{"compare", "\\set a 1\n\\set b 2\nSELECT 1 WHERE :a = :b;\n", QueryModes},
	{"gset-prefix", "SELECT 1 AS one, 2 AS two \\gset p_\nSELECT :p_one::int + :p_two::int AS three;\n", QueryModes},
	{"aset", "SELECT 10 AS x \\aset\nSELECT :x::int * 2;\n", QueryModes},
	{"select-list", "\\set aid 3\nSELECT abalance, :aid FROM pgbench_accounts WHERE aid = :aid;\n", QueryModes},
	{"typed", "\\set aid 3\n\\set delta -40\nUPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid;\nSELECT abalance FROM pgbench_accounts WHERE aid = :aid;\n", QueryModes},
	{"double", "\\set d 1.0 / 3\nSELECT :d::float8 * 3;\n", QueryModes},
	{"null", "SELECT NULL AS n \\gset\nSELECT :n IS NULL;\n", QueryModes},
	// Only simple mode: pgbench's prepared and extended modes also turn a
	// :name inside quotes into $n (and then fail at Bind); obsbench leaves
	// quotes alone there.
	{"quoted", "\\set n 42\nSELECT ':n' AS who, length(':n');\n", []QueryMode{Simple}},
}

// logLine is a line of the statement log: the application, then what was
// logged.
var logLine = regexp.MustCompile(`^(pgbench|` + postgres.DriverApplication + `)\|(LOG|DETAIL|ERROR|STATEMENT):  (.*)$`)

// executeName is the name of a prepared or unnamed statement in the log,
// which differs between the tools.
var executeName = regexp.MustCompile(`^execute [^:]+: `)

// statementLog reads what the server logged of app's statements since
// offset: each statement (its tag comment removed) with its parameters
// and error.
func statementLog(t *testing.T, path string, offset int64, app, tag string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, line := range strings.Split(string(b[offset:]), "\n") {
		m := logLine.FindStringSubmatch(line)
		if m == nil {
			if len(out) > 0 && line != "" && !strings.Contains(line, "|") {
				out[len(out)-1] += "\n" + line // a statement's next line
			}
			continue
		}
		if m[1] != app {
			continue
		}
		text := strings.Replace(m[3], "/* "+tag+" */ ", "", 1)
		text = executeName.ReplaceAllString(text, "execute: ")
		// pgbench sends a statement with its ';', or up to the \gset
		// with the space before it; obsbench without either.
		text = strings.TrimRight(strings.TrimSpace(text), ";")
		out = append(out, m[2]+": "+text)
	}
	return out
}

// The installed pgbench and obsbench's client, run on the same scripts in
// each query mode, end the same way (success, or the same error) and send
// the same statements, text for text: the server's statement log of both
// is compared after the tag.
func TestQueryModesAgreeWithPgbench(t *testing.T) {
	ctx := context.Background()
	pg := servertest.PostgresWith(t, map[string]string{"log_statement": "'all'", "log_line_prefix": "'%a|'"})
	InitWithPgbench(t, pg, 1)
	dsn := pg.DSN("postgres")
	srv := postgres.New(dsn, postgres.Options{})
	aborted := regexp.MustCompile(`aborted in command \d+ query \d+: ERROR:  (.*)`)
	const tag = "obsbench-mode-test"
	modesFailing := 0
	for _, sc := range modeScripts {
		for _, mode := range sc.modes {
			name := fmt.Sprintf("%s/%s", sc.name, mode)
			file := filepath.Join(t.TempDir(), sc.name+".sql")
			if err := os.WriteFile(file, []byte(sc.text), 0o600); err != nil {
				t.Fatal(err)
			}
			offset := logSize(t, pg.ServerLog())
			cmd := exec.Command(filepath.Join(pg.BinDir(), "pgbench"), "-n", "-t", "1", "-M", string(mode), "-f", file, dsn)
			cmd.Env = append(os.Environ(), "LC_ALL=C")
			out, perr := cmd.CombinedOutput()
			wantErr := ""
			if m := aborted.FindSubmatch(out); m != nil {
				wantErr = strings.TrimSpace(string(m[1]))
			} else if perr != nil {
				t.Fatalf("%s: pgbench: %v\n%s", name, perr, out)
			}
			time.Sleep(100 * time.Millisecond) // the log is written by the server
			want := statementLog(t, pg.ServerLog(), offset, "pgbench", tag)

			script, err := ParseScript(file, sc.text)
			if err != nil {
				t.Fatal(err)
			}
			offset = logSize(t, pg.ServerLog())
			gotErr := runOnce(ctx, t, srv, script, mode, tag)
			time.Sleep(100 * time.Millisecond)
			got := statementLog(t, pg.ServerLog(), offset, postgres.DriverApplication, tag)

			var pe *pgconn.PgError
			switch {
			case wantErr == "" && gotErr != nil:
				t.Errorf("%s: pgbench ran it; obsbench: %v", name, gotErr)
			case wantErr == "" && !slices.Equal(got, want):
				t.Errorf("%s: the server's log differs\npgbench:\n  %s\nobsbench:\n  %s", name, strings.Join(want, "\n  "), strings.Join(got, "\n  "))
			case wantErr != "" && !errors.As(gotErr, &pe):
				t.Errorf("%s: pgbench failed with %q; obsbench: %v", name, wantErr, gotErr)
			case wantErr != "" && pe.Message != firstError(want):
				// pgbench -M prepared prepares every statement first,
				// goes on when one fails, and fails at its execution
				// ("prepared statement P_1 does not exist"): the cause
				// is the first error the server logged.
				t.Errorf("%s: pgbench failed with %q (the server logged %q first); obsbench with %q", name, wantErr, firstError(want), pe.Message)
			}
			var me *ModeError
			if wantErr != "" && mode != Simple && errors.As(gotErr, &me) {
				modesFailing++
				if me.Suggest != Simple || !strings.Contains(me.Error(), "--query-mode simple") {
					t.Errorf("%s: %v; want the mode named and simple suggested", name, me)
				}
			}
		}
	}
	if modesFailing < 4 {
		t.Errorf("%d scripts failed in extended or prepared mode with a mode error; want the arithmetic, comparison and NULL ones in both (pgbench fails them too)", modesFailing)
	}
}

// atCharacter is where the server's log puts the error in the statement.
var atCharacter = regexp.MustCompile(` at character \d+$`)

// firstError is the first error in a statement log.
func firstError(log []string) string {
	for _, l := range log {
		if msg, ok := strings.CutPrefix(l, "ERROR: "); ok {
			return atCharacter.ReplaceAllString(msg, "")
		}
	}
	return ""
}

func logSize(t *testing.T, path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

// runOnce runs each statement of script once in a session of srv in mode,
// as pgbench -t 1 does, and returns the first error.
func runOnce(ctx context.Context, t *testing.T, srv *postgres.Server, script *Script, mode QueryMode, tag string) error {
	t.Helper()
	sess, err := srv.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close(ctx)
	c, err := NewClient(sess, []Weighted{{Script: script, Weight: 1}}, map[string]string{"scale": "1"}, 0, 1, tag)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.SetQueryMode(mode); err != nil {
		t.Fatal(err)
	}
	if err := c.PrepareAll(ctx); err != nil {
		return err
	}
	n := 0
	for _, cmd := range script.Commands {
		if cmd.Kind == SQL {
			n++
		}
	}
	for i := 0; i < n; i++ {
		if err := c.Op(ctx); err != nil {
			return err
		}
	}
	return nil
}
