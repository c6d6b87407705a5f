package postgres

import (
	"testing"
)

// The translations of the installed PostgreSQL's catalogs (Debian's
// postgresql-15 installs eleven) turn the messages a capture reads back
// into English. The translated lines are written here from the catalog's
// own formats, as the server fills them; TestRealPostgresForeignLog has a
// real server write them.
func TestMessagesEnglish(t *testing.T) {
	langs := InstalledLanguages(CatalogDirs)
	if len(langs) < 5 {
		t.Fatalf("installed PostgreSQL message catalogs: %v; want postgresql-15's (scripts/install-deps.sh installs it)", langs)
	}
	for _, lang := range langs {
		m, err := LoadMessages(lang, CatalogDirs)
		if err != nil {
			t.Fatalf("%s: %v", lang, err)
		}
		cat, err := readMO(m.Catalog)
		if err != nil {
			t.Fatal(err)
		}
		tr := func(id string) string {
			if s := cat[id]; s != "" {
				return s
			}
			return id
		}
		sprintf := func(f string, args ...string) string {
			ff, err := parseFormat(f)
			if err != nil {
				t.Fatalf("%s: %q: %v", lang, f, err)
			}
			return ff.fill(args)
		}
		exec := tr("execute")
		for _, c := range []struct{ sev, msg, detail, wantMsg, wantDetail string }{
			{tr("LOG"), sprintf(tr("statement: %s"), "SELECT 1"), "", "statement: SELECT 1", ""},
			{tr("LOG"), sprintf(tr("duration: %s ms  statement: %s"), "0.125", "SELECT 1"), "", "duration: 0.125 ms  statement: SELECT 1", ""},
			{tr("LOG"), sprintf(tr("%s %s%s%s: %s"), exec, "<unnamed>", "", "", "SELECT $1"), sprintf(tr("parameters: %s"), "$1 = '7'"),
				"execute <unnamed>: SELECT $1", "parameters: $1 = '7'"},
			{tr("LOG"), sprintf(tr("duration: %s ms  %s %s%s%s: %s"), "1.500", exec, "s1", "/", "p1", "SELECT 2"), "",
				"duration: 1.500 ms  execute s1/p1: SELECT 2", ""},
			{tr("LOG"), sprintf(tr("%s %s%s%s: %s"), tr("execute fetch from"), "s1", "", "", "SELECT 3"), "", "execute fetch from s1: SELECT 3", ""},
			{tr("LOG"), sprintf(tr("duration: %s ms"), "2.000"), "", "duration: 2.000 ms", ""},
			{tr("LOG"), sprintf(tr("connection authorized: user=%s"), "alice") + sprintf(tr(" database=%s"), "shop") + sprintf(tr(" application_name=%s"), "psql"), "",
				"connection authorized: user=alice database=shop application_name=psql", ""},
			{tr("LOG"), sprintf(tr("disconnection: session time: %d:%02d:%02d.%03d user=%s database=%s host=%s%s%s"), "0", "00", "01", "250", "alice", "shop", "[local]", "", ""), "",
				"", ""},
		} {
			sev, msg, detail := m.English(c.sev, c.msg, c.detail)
			if sev != "LOG" {
				t.Errorf("%s: severity %q -> %q; want LOG", lang, c.sev, sev)
			}
			if c.wantMsg == "" { // the disconnection: only its start is read
				if len(msg) < 15 || msg[:15] != "disconnection: " {
					t.Errorf("%s: %q -> %q; want disconnection: ...", lang, c.msg, msg)
				}
				continue
			}
			if msg != c.wantMsg || detail != c.wantDetail {
				t.Errorf("%s: %q / %q\n -> %q / %q\nwant %q / %q", lang, c.msg, c.detail, msg, detail, c.wantMsg, c.wantDetail)
			}
		}
	}
}

func TestLoadMessagesErrors(t *testing.T) {
	if _, err := LoadMessages("xx", CatalogDirs); err == nil {
		t.Error("language xx: no error")
	}
	if _, err := LoadMessages("de", []string{t.TempDir()}); err == nil {
		t.Error("no catalogs: no error")
	}
	if m, err := LoadMessages("de_DE.UTF-8", CatalogDirs); err != nil || m.Severity("LOG") != "LOG" {
		t.Errorf("de_DE.UTF-8: %v", err)
	}
}

func TestFormatMatch(t *testing.T) {
	for _, c := range []struct {
		format, s string
		want      []string
		ok        bool
	}{
		{"statement: %s", "statement: SELECT 1", []string{"SELECT 1"}, true},
		{"Dauer: %s ms", "Dauer: 1.0 ms", []string{"1.0"}, true},
		{"Dauer: %s ms", "Dauer: 1.0 ms  Anweisung: x", nil, false},
		{"a %s b %s", "a 1 b 2 b 3", []string{"1", "2 b 3"}, true},
		{"100%% %s", "100% x", []string{"x"}, true},
		{"x %s", "y 1", nil, false},
	} {
		f, err := parseFormat(c.format)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := f.match(c.s)
		if ok != c.ok || len(got) != len(c.want) || (ok && got[len(got)-1] != c.want[len(c.want)-1]) {
			t.Errorf("%q.match(%q) = %q, %v; want %q, %v", c.format, c.s, got, ok, c.want, c.ok)
		}
	}
}
