package study

import (
	"embed"
	"fmt"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"

	"github.com/obsbench/obsbench/internal/result"
	"github.com/obsbench/obsbench/internal/spec"
	"github.com/obsbench/obsbench/internal/yamlfile"
)

// The built-in studies, one file per study, an entry per engine.
//
//go:embed studies/*.yaml
var builtinFiles embed.FS

// studies holds the built-in studies by engine, then name.
var studies = mustLoad()

// studyFile is one study's file: what every engine's entry shares, and
// the entries.
type studyFile struct {
	Name  string `yaml:"name"`
	Title string `yaml:"title"`
	// Question is the entries' question, unless an entry has its own.
	Question string  `yaml:"question"`
	Engines  []Study `yaml:"engines"`
}

func mustLoad() map[string]map[string]Study {
	out, err := load(builtinFiles)
	if err != nil {
		panic(err) // the files are built in: a test loads them
	}
	return out
}

// load reads every studies/*.yaml of fsys.
func load(fsys embed.FS) (map[string]map[string]Study, error) {
	names, err := studyFiles(fsys)
	if err != nil {
		return nil, err
	}
	out := map[string]map[string]Study{}
	for _, name := range names {
		data, err := fsys.ReadFile(name)
		if err != nil {
			return nil, err
		}
		sts, err := Parse(name, data)
		if err != nil {
			return nil, err
		}
		for _, st := range sts {
			if _, dup := out[st.Engine][st.Name]; dup {
				return nil, &yamlfile.SyntaxError{File: name, Line: 1, Column: 1, Msg: fmt.Sprintf("study %q for %s is defined in another file too", st.Name, st.Engine)}
			}
			if out[st.Engine] == nil {
				out[st.Engine] = map[string]Study{}
			}
			out[st.Engine][st.Name] = st
		}
	}
	return out, nil
}

// studyFiles lists the study files of fsys, by name.
func studyFiles(fsys embed.FS) ([]string, error) {
	entries, err := fsys.ReadDir("studies")
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range entries {
		names = append(names, path.Join("studies", e.Name()))
	}
	return names, nil
}

// Parse reads one study's file: its name, title and question, and an entry
// per engine with the fields of Study. Unknown fields, wrong types and
// invalid values are errors that point at the line and column of file.
func Parse(file string, data []byte) ([]Study, error) {
	f, err := parser.ParseBytes(data, 0)
	if err != nil {
		return nil, yamlfile.FromYAML(file, err)
	}
	if len(f.Docs) != 1 || f.Docs[0].Body == nil {
		return nil, &yamlfile.SyntaxError{File: file, Line: 1, Column: 1, Msg: "expected one YAML document: a study's name, title, question and engines"}
	}
	body := f.Docs[0].Body
	var entries []ast.Node
	if kv, ok := yamlfile.Field(body, "engines"); ok {
		if seq, ok := kv.Value.(*ast.SequenceNode); ok {
			entries = seq.Values
		}
	}
	if err := checkDurations(file, entries); err != nil {
		return nil, err
	}
	var sf studyFile
	if err := yaml.NodeToValue(body, &sf, yaml.DisallowUnknownField()); err != nil {
		return nil, yamlfile.FromYAML(file, err)
	}
	// key is where the file's field is, or the file's start.
	key := func(n ast.Node, field string) ast.Node {
		if kv, ok := yamlfile.Field(n, field); ok {
			return kv.Key
		}
		return n
	}
	switch want := strings.TrimSuffix(path.Base(file), ".yaml"); {
	case sf.Name != want:
		return nil, yamlfile.At(file, key(body, "name"), "name %q: want the file's name, %q", sf.Name, want)
	case sf.Title == "":
		return nil, yamlfile.At(file, body, "a study needs a title: the question it answers, in a line")
	case len(sf.Engines) == 0:
		return nil, yamlfile.At(file, body, "a study needs engines: an entry per engine it runs on")
	}
	var out []Study
	for i, st := range sf.Engines {
		entry := body
		if i < len(entries) {
			entry = entries[i]
		}
		st.Name, st.Title = sf.Name, sf.Title
		if st.Question == "" {
			st.Question = sf.Question
		}
		if len(st.Matrix) > 0 {
			if len(st.Rows) > 0 {
				return nil, yamlfile.At(file, key(entry, "rows"), "a matrix makes the rows: give one or the other")
			}
			st.Rows = matrixRows(st.Matrix)
		}
		if field, msg := check(st); msg != "" {
			n := entry
			if field != "" {
				n = key(entry, field)
			}
			line, col := yamlfile.EntryPosition(n)
			return nil, &yamlfile.SyntaxError{File: file, Line: line, Column: col, Msg: msg}
		}
		if slices.ContainsFunc(out, func(o Study) bool { return o.Engine == st.Engine }) {
			return nil, yamlfile.At(file, key(entry, "engine"), "engine %s has two entries", st.Engine)
		}
		out = append(out, st)
	}
	return out, nil
}

// checkDurations refuses a duration the entries' duration or waits field
// cannot be: the YAML library's own error would not say where.
func checkDurations(file string, entries []ast.Node) error {
	for _, entry := range entries {
		for _, field := range []string{"duration", "waits"} {
			kv, ok := yamlfile.Field(entry, field)
			if !ok {
				continue
			}
			tk := kv.Value.GetToken()
			if tk == nil {
				continue
			}
			if _, err := time.ParseDuration(tk.Value); err != nil {
				return yamlfile.At(file, kv.Value, "%s %s: want a duration with its unit, such as 5s or 10ms", field, tk.Value)
			}
		}
	}
	return nil
}

// check is what an entry must hold: the field at fault (its YAML name) and
// what is wrong, or "".
func check(st Study) (field, msg string) {
	switch {
	case st.Engine == "":
		return "", "an entry needs an engine"
	case st.Question == "":
		return "", "an entry needs a question (its own, or the file's)"
	case st.Workload == "":
		return "", "an entry needs a workload"
	case st.Clients < 1:
		return "clients", fmt.Sprintf("clients %d: want 1 or more", st.Clients)
	case !st.Method.Valid():
		return "method", fmt.Sprintf("method %q: want %s", st.Method, spec.OneOf(result.Methods))
	case st.Rounds < 0 || st.Duration < 0 || st.Waits < 0:
		return "", "rounds, duration and waits: want 0 (the default) or more"
	case st.Standby != "" && st.Standby != spec.StandbyAsync && st.Standby != spec.StandbySync:
		return "standby", fmt.Sprintf("standby %q: want async or sync (or none, leaving it out)", st.Standby)
	case (st.Audit == "") != (len(st.Sessions) == 0):
		return "", "audit and sessions go together: the audit observer and the session counts it is swept over"
	case len(st.Rows) == 0:
		return "", "an entry needs rows (set-ups, the baseline first) or a matrix"
	case st.Rows[0].Observer != "baseline":
		return "rows", fmt.Sprintf("the first row is %q: want the baseline first", st.Rows[0].Observer)
	}
	aa := "baseline-again"
	if st.Method.Twins() {
		aa = duetAA // the duet's own A/A arm, not a second baseline
	}
	for _, c := range st.Matrix {
		switch {
		case !slices.Contains(st.Columns(), c.Variant):
			return "matrix", fmt.Sprintf("%s: variant %q: want %s", c.Observer, c.Variant, spec.OneOf(st.Columns()))
		case c.Target == aaTarget && c.Observer != aa:
			return "matrix", fmt.Sprintf("the A/A cell is %q: want %q with method %s", c.Observer, aa, st.Method)
		}
	}
	if c := st.Count; c != nil && (c.Statements < 10 || c.Warmup < 0) {
		return "count", fmt.Sprintf("count: %d statements after %d: want 10 or more after 0 or more", c.Statements, c.Warmup)
	}
	if c := st.Count; c != nil && c.Shrink < 0 {
		return "count", fmt.Sprintf("count: shrink %d: want 1 or more (or none: the timed runs' dataset)", c.Shrink)
	}
	for name, v := range st.Params {
		if v < 1 {
			return "params", fmt.Sprintf("%s %d: want 1 or more", name, v)
		}
	}
	return "", ""
}
