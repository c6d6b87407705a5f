package capture

import (
	"bytes"
	"context"
	"io"
	"slices"
	"strings"
	"sync"
)

// A Source is a server log format a capture is made from. Each engine
// registers its own (Register), with the reader that reads it: the
// format's rules are the engine's, the capture file and its records are
// this package's.
type Source struct {
	Name    string // how --source names it: csvlog
	Engine  string // the engine whose server writes it: postgres
	Product string // the server's own name, for messages: PostgreSQL
	// Ext is the extension of its files in a log directory. A directory
	// is read as the source whose extension only it has, where it has
	// such files; Ext shared with another source (.log) is the fallback.
	Ext string
	// Describe names it in a list of what obsbench reads: "csvlog
	// (*.csv)".
	Describe string
	// HowToLog is what makes the server log its statements so:
	// "log_statement=all or log_min_duration_statement=0".
	HowToLog string
	// Takes says which read options say how this source is read.
	Takes Takes
	// Sniff says whether line, a file's first, is of this source; a
	// Fallback source is tried after the others, its test matching some
	// of their lines too.
	Sniff    func(line string) bool
	Fallback bool
	// Open prepares the reading of a log of this source with o.
	Open func(ctx context.Context, o ReadOptions) (Opened, error)
	// Order places the source in lists, and first where a log could be
	// any source (an empty one): lower first. Engines register in no
	// fixed order.
	Order int
}

// Takes are the read options a source reads.
type Takes struct {
	LinePrefix, Server, Language bool
}

// ReadOptions say how a log is written where the log cannot say it.
type ReadOptions struct {
	// LinePrefix, if given, is what begins every line (it may be "").
	LinePrefix *string
	// Server, if set, is the address of the server whose settings say
	// how its log is written.
	Server string
	// Language is the language of the log's messages; "" for the
	// server's, or English.
	Language string
}

// Opened is a log's reading, prepared: its reader, the line prefix it
// reads with (recorded in the capture's header; "" if none), and notes
// for the user on how it reads.
type Opened struct {
	Reader     LogReader
	LinePrefix string
	Notes      []string
}

// A LogReader reads the files of one log, in the order the server wrote
// them, into p's records: it calls p.Line for each line, p.Skip for each
// entry that is no record, and p.Emit for each record p.Keeps.
type LogReader interface {
	Read(ctx context.Context, p *Parser, r io.Reader, name string) error
}

// A Hinter says, of a log in which it found no statement, what might be
// wrong ("" for nothing): a PostgreSQL log in another language than the
// one it was read in.
type Hinter interface {
	NoStatementHint() string
}

var (
	mu      sync.RWMutex
	sources []Source
)

// Register makes a source readable; engines call it from init.
func Register(s Source) {
	mu.Lock()
	defer mu.Unlock()
	for _, x := range sources {
		if x.Name == s.Name {
			panic("capture: source " + s.Name + " registered twice")
		}
	}
	sources = append(sources, s)
	slices.SortStableFunc(sources, func(a, b Source) int { return a.Order - b.Order })
}

// Sources are the registered sources, by Order.
func Sources() []Source {
	mu.RLock()
	defer mu.RUnlock()
	return append([]Source(nil), sources...)
}

// SourceNamed is the registered source name.
func SourceNamed(name string) (Source, bool) {
	for _, s := range Sources() {
		if s.Name == name {
			return s, true
		}
	}
	return Source{}, false
}

// SourcesOf are the sources engine writes, all of them for "".
func SourcesOf(engine string) []Source {
	var of []Source
	for _, s := range Sources() {
		if engine == "" || s.Engine == engine {
			of = append(of, s)
		}
	}
	return of
}

// Sniff names the source whose first line is line, "" if it is none of
// them.
func Sniff(line []byte) string {
	s := string(bytes.TrimRight(line, "\r\n"))
	for _, fallback := range []bool{false, true} {
		for _, src := range Sources() {
			if src.Fallback == fallback && src.Sniff != nil && src.Sniff(s) {
				return src.Name
			}
		}
	}
	return ""
}

// byProduct groups the sources' texts by the product that writes them,
// in their order: each group is the product's name and its
// sources' texts.
func byProduct(srcs []Source, text func(Source) string) (products []string, texts [][]string) {
	for _, s := range srcs {
		i := len(products) - 1
		if i < 0 || products[i] != s.Product {
			products, texts = append(products, s.Product), append(texts, nil)
			i++
		}
		texts[i] = append(texts[i], text(s))
	}
	return products, texts
}

// sourceList is every source's name with its product: "csvlog, jsonlog,
// stderr (PostgreSQL), general-log (MariaDB)".
func sourceList() string {
	products, names := byProduct(Sources(), func(s Source) string { return s.Name })
	groups := make([]string, len(products))
	for i, p := range products {
		groups[i] = strings.Join(names[i], ", ") + " (" + p + ")"
	}
	return strings.Join(groups, ", ")
}
