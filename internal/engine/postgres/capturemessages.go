package postgres

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// A server whose lc_messages is not English writes its log messages and
// severities translated, from the message catalog of its language
// (postgres-15.mo). Messages translates the few a capture reads back into
// English with the same catalog: each translated format is matched with
// its conversions as wildcards, and the English format is filled with
// what they matched.
type Messages struct {
	// Catalog is the file the translations were read from.
	Catalog    string
	severities map[string]string // translated -> English
	rules      []messageRule
	// connect turns the words of a connection message after its user
	// back into English.
	connect *strings.Replacer
	param   format // "parameters: %s", translated (nil lits: not)
	// connectsASCII says the connection message's translation is ASCII.
	// A backend logs its connection before it knows its database's
	// encoding, and gettext then writes the translation transliterated to
	// ASCII ("podklyuchenie avtorizovano" for Russian): a translation
	// that is not ASCII cannot be read back.
	connectsASCII bool
}

// messageRule turns a message that matches from into to, filled with
// what from's conversions matched.
type messageRule struct{ from, to format }

// The formats of the messages a capture reads (PostgreSQL 15's
// src/backend/tcop/postgres.c, src/backend/utils/init/postinit.c), in the
// order they are tried: a format that another one begins with comes
// after it. "%E" and "%F" stand for the catalog's own translations of
// "execute" and "execute fetch from", which postgres.c puts into its
// "%s %s%s%s: %s" (a statement name, "/" and a portal name, then the SQL).
var messageFormats = []struct {
	english, msgid string
	// head: only the text before the first conversion is read (the
	// parser looks no further into a disconnection).
	head bool
}{
	{english: "duration: %s ms  statement: %s", msgid: "duration: %s ms  statement: %s"},
	{english: "duration: %s ms  execute fetch from %s: %s", msgid: "duration: %s ms  %F %s%s%s: %s"},
	{english: "duration: %s ms  execute %s: %s", msgid: "duration: %s ms  %E %s%s%s: %s"},
	{english: "duration: %s ms", msgid: "duration: %s ms"},
	{english: "statement: %s", msgid: "statement: %s"},
	{english: "execute fetch from %s: %s", msgid: "%F %s%s%s: %s"},
	{english: "execute %s: %s", msgid: "%E %s%s%s: %s"},
	{english: "connection authorized: user=%s", msgid: "connection authorized: user=%s"},
	{english: "disconnection: session time: %s", msgid: "disconnection: session time: %d:%02d:%02d.%03d user=%s database=%s host=%s%s%s", head: true},
}

// The words of a connection message after its user, which connectField
// and connectApplication look for.
var connectWords = []string{" database=%s", " application_name=%s"}

// The severities of PostgreSQL's error_severity(), all of which a
// stderr log's lines may begin with.
var severityWords = []string{"DEBUG", "LOG", "INFO", "NOTICE", "WARNING", "ERROR", "FATAL", "PANIC",
	"DETAIL", "HINT", "QUERY", "CONTEXT", "LOCATION", "STATEMENT"}

// CatalogDirs are where PostgreSQL's message catalogs are looked for:
// Debian's and most distributions' locale directory, and a source
// build's.
var CatalogDirs = []string{"/usr/share/locale", "/usr/local/share/locale", "/usr/local/pgsql/share/locale"}

// LoadMessages reads the translations of lang (a language such as "de",
// or a locale such as "de_DE.UTF-8", as lc_messages names it) from the
// newest PostgreSQL message catalog installed in dirs, or from lang itself
// when it is the path of a .mo file.
func LoadMessages(lang string, dirs []string) (*Messages, error) {
	path := lang
	if !strings.HasSuffix(lang, ".mo") {
		var err error
		if path, err = findCatalog(lang, dirs); err != nil {
			return nil, err
		}
	}
	cat, err := readMO(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return newMessages(path, cat)
}

// findCatalog is the newest postgres-*.mo of lang's language in dirs: a
// locale "de_DE.UTF-8" looks for de_DE, then de.
func findCatalog(lang string, dirs []string) (string, error) {
	base, _, _ := strings.Cut(lang, ".")
	base, _, _ = strings.Cut(base, "@")
	names := []string{base}
	if l, _, ok := strings.Cut(base, "_"); ok {
		names = append(names, l)
	}
	for _, name := range names {
		var found []string
		for _, dir := range dirs {
			m, _ := filepath.Glob(filepath.Join(dir, name, "LC_MESSAGES", "postgres-*.mo"))
			found = append(found, m...)
		}
		if len(found) > 0 {
			slices.SortFunc(found, func(a, b string) int { return catalogVersion(b) - catalogVersion(a) })
			return found[0], nil
		}
	}
	langs := InstalledLanguages(dirs)
	if len(langs) == 0 {
		return "", fmt.Errorf("language %q: no PostgreSQL message catalog (postgres-*.mo) is installed in %s; give the catalog's path (from the server's machine: pg_config --localedir)", lang, strings.Join(dirs, ", "))
	}
	return "", fmt.Errorf("language %q: no PostgreSQL message catalog for it in %s; installed: %s", lang, strings.Join(dirs, ", "), strings.Join(langs, ", "))
}

// catalogVersion is 15 for ".../postgres-15.mo".
func catalogVersion(path string) int {
	var v int
	fmt.Sscanf(strings.TrimPrefix(filepath.Base(path), "postgres-"), "%d", &v)
	return v
}

// InstalledLanguages are the languages of the PostgreSQL message catalogs
// in dirs.
func InstalledLanguages(dirs []string) []string {
	var langs []string
	for _, dir := range dirs {
		m, _ := filepath.Glob(filepath.Join(dir, "*", "LC_MESSAGES", "postgres-*.mo"))
		for _, p := range m {
			langs = append(langs, filepath.Base(filepath.Dir(filepath.Dir(p))))
		}
	}
	slices.Sort(langs)
	return slices.Compact(langs)
}

// GuessLanguages are the installed languages in whose translation one of
// messages is a logged statement or connection: what a log whose
// lc_messages was one of them looks like.
func GuessLanguages(messages []string, dirs []string) []string {
	var langs []string
	for _, lang := range InstalledLanguages(dirs) {
		m, err := LoadMessages(lang, dirs)
		if err != nil {
			continue
		}
		for _, msg := range messages {
			if _, english, _ := m.English("", msg, ""); english != msg {
				langs = append(langs, lang)
				break
			}
		}
	}
	return langs
}

func newMessages(path string, cat map[string]string) (*Messages, error) {
	tr := func(id string) string {
		if s, ok := cat[id]; ok && s != "" {
			return s
		}
		return id // untranslated: the server writes the English
	}
	m := &Messages{Catalog: path, severities: map[string]string{}}
	for _, w := range severityWords {
		if t := tr(w); t != w {
			m.severities[t] = w
		}
		// elog.c labels an entry's further lines with _("DETAIL:  ")
		// and the like, translated apart from the severities.
		if t := tr(w + ":  "); t != w+":  " {
			m.severities[strings.TrimSuffix(t, ":  ")] = w
		}
	}
	for _, f := range messageFormats {
		id := strings.NewReplacer("%E", "%s", "%F", "%s").Replace(f.msgid)
		from, err := parseFormat(tr(id))
		if err != nil {
			return nil, fmt.Errorf("%s: the translation of %q: %w", path, id, err)
		}
		switch {
		case f.msgid != id:
			// postgres.c translates "%s %s%s%s: %s" and
			// "duration: %s ms  %s %s%s%s: %s" with the word as an
			// argument: the conversion before the name's three.
			word := tr("execute")
			if strings.Contains(f.msgid, "%F") {
				word = tr("execute fetch from")
			}
			from = mergeNameParts(from.literal(strings.Count(id[:strings.Index(id, " %s%s%s")], "%s")-1, word))
		case f.head:
			from = format{lits: []string{from.lits[0], ""}}
		}
		m.rules = append(m.rules, messageRule{from: from, to: mustFormat(f.english)})
	}
	if t := tr("parameters: %s"); t != "parameters: %s" {
		f, err := parseFormat(t)
		if err != nil {
			return nil, fmt.Errorf("%s: the translation of \"parameters: %%s\": %w", path, err)
		}
		m.param = f
	}
	m.connectsASCII = isASCII(tr("connection authorized: user=%s")) && isASCII(tr("LOG"))
	var words []string
	for _, w := range connectWords {
		if t := tr(w); t != w {
			head, _, _ := strings.Cut(t, "%s")
			words = append(words, head, strings.TrimSuffix(w, "%s"))
		}
	}
	m.connect = strings.NewReplacer(words...)
	return m, nil
}

// mustFormat parses one of the English formats above.
func mustFormat(s string) format {
	f, err := parseFormat(s)
	if err != nil {
		panic(err)
	}
	return f
}

// literal is f with its nth conversion (from 0) replaced by text.
func (f format) literal(n int, text string) format {
	lits := slices.Clone(f.lits[:n])
	lits = append(lits, f.lits[n]+text+f.lits[n+1])
	return format{lits: append(lits, f.lits[n+2:]...)}
}

// mergeNameParts joins the three conversions of a statement's name
// ("%s%s%s": name, "/", portal), which nothing separates, into one.
func mergeNameParts(f format) format {
	var lits []string
	for i, l := range f.lits {
		if l == "" && i > 0 && i < len(f.lits)-1 {
			continue
		}
		lits = append(lits, l)
	}
	return format{lits: lits}
}

// English turns a translated severity, message and detail into
// PostgreSQL's English; what it does not know stays as it is.
func (m *Messages) English(severity, message, detail string) (string, string, string) {
	if m == nil {
		return severity, message, detail
	}
	severity = m.Severity(severity)
	for _, r := range m.rules {
		if args, ok := r.from.match(message); ok {
			message = r.to.fill(args)
			if strings.HasPrefix(message, "connection authorized: ") {
				message = m.connect.Replace(message)
			}
			break
		}
	}
	if m.param.lits != nil {
		if d, ok := m.param.match(detail); ok {
			detail = "parameters: " + d[0]
		}
	}
	return severity, message, detail
}

// Severity is the English of a translated severity (s itself when it
// is none).
func (m *Messages) Severity(s string) string {
	if m != nil {
		if e, ok := m.severities[s]; ok {
			return e
		}
	}
	return s
}

// ReadsConnections says whether the log's connection messages can be
// read: false where PostgreSQL writes them transliterated (see
// connectsASCII). Sessions then begin at their first statement, with
// the user and database of its log line.
func (m *Messages) ReadsConnections() bool { return m == nil || m.connectsASCII }

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// severitiesOf are the translated severities (none for nil).
func (m *Messages) severitiesOf() map[string]string {
	if m == nil {
		return nil
	}
	return m.severities
}

// format is a printf format split at its conversions: len(lits) is one
// more than its conversions.
type format struct{ lits []string }

// parseFormat splits a C format; positional conversions (%1$s) are
// refused, which PostgreSQL's catalogs do not use in these messages.
func parseFormat(s string) (format, error) {
	var f format
	var lit strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '%' {
			lit.WriteByte(s[i])
			continue
		}
		if i+1 < len(s) && s[i+1] == '%' {
			lit.WriteByte('%')
			i++
			continue
		}
		j := i + 1
		for j < len(s) && strings.IndexByte("0123456789.-l", s[j]) >= 0 {
			j++
		}
		if j < len(s) && s[j] == '$' {
			return format{}, errors.New("positional conversions are not read")
		}
		if j >= len(s) {
			return format{}, errors.New("a conversion at the end is incomplete")
		}
		f.lits = append(f.lits, lit.String())
		lit.Reset()
		i = j
	}
	f.lits = append(f.lits, lit.String())
	return f, nil
}

// match matches s against f: each conversion takes the shortest text up
// to the next literal, the last one the rest of s up to f's last literal.
func (f format) match(s string) ([]string, bool) {
	rest, ok := strings.CutPrefix(s, f.lits[0])
	if !ok {
		return nil, false
	}
	var args []string
	for i, lit := range f.lits[1:] {
		last := i == len(f.lits)-2
		var j int
		switch {
		case last && lit == "":
			j = len(rest)
		case last:
			if !strings.HasSuffix(rest, lit) {
				return nil, false
			}
			j = len(rest) - len(lit)
		default:
			if j = strings.Index(rest, lit); j < 0 {
				return nil, false
			}
		}
		args = append(args, rest[:j])
		rest = rest[j+len(lit):]
	}
	return args, true
}

// fill puts args into f's conversions.
func (f format) fill(args []string) string {
	var b strings.Builder
	for i, lit := range f.lits {
		b.WriteString(lit)
		if i < len(args) && i < len(f.lits)-1 {
			b.WriteString(args[i])
		}
	}
	return b.String()
}

// readMO reads a GNU gettext message catalog: msgid -> msgstr (the
// first form of a plural).
func readMO(path string) (map[string]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if len(b) < 28 {
		return nil, errors.New("not a message catalog: too short")
	}
	var order binary.ByteOrder
	switch binary.LittleEndian.Uint32(b) {
	case 0x950412de:
		order = binary.LittleEndian
	case 0xde120495:
		order = binary.BigEndian
	default:
		return nil, errors.New("not a message catalog (.mo): bad magic number")
	}
	n, ids, strs := order.Uint32(b[8:]), order.Uint32(b[12:]), order.Uint32(b[16:])
	str := func(table uint32, i uint32) (string, bool) {
		at := uint64(table) + 8*uint64(i)
		if at+8 > uint64(len(b)) {
			return "", false
		}
		l, o := uint64(order.Uint32(b[at:])), uint64(order.Uint32(b[at+4:]))
		if o+l > uint64(len(b)) {
			return "", false
		}
		s, _, _ := strings.Cut(string(b[o:o+l]), "\x00")
		return s, true
	}
	cat := make(map[string]string, n)
	for i := uint32(0); i < n; i++ {
		id, ok1 := str(ids, i)
		s, ok2 := str(strs, i)
		if !ok1 || !ok2 {
			return nil, fmt.Errorf("entry %d is outside the file", i)
		}
		cat[id] = s
	}
	return cat, nil
}
