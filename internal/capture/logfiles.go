package capture

// The logs a capture reads: directories expanded into their files, and
// the files' source told from their names or first line.

import (
	"bufio"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/obsbench/obsbench/internal/engine"
	"github.com/obsbench/obsbench/internal/spec"
)

// extensions are the file names each source's logs have in a directory.
var extensions = map[string]string{"csvlog": ".csv", "jsonlog": ".json", "stderr": ".log", "general-log": ".log"}

// logFiles expands directories into their log files, sorted by name
// (PostgreSQL's rotated file names sort by time), and settles the source:
// the one given, or the one every file is, by its extension or first
// line. A directory gives the files of its source: PostgreSQL's csvlog
// directory also holds the stderr log's *.log files, which are read only
// where there is no csvlog or jsonlog.
func logFiles(args []string, source, eng string) ([]string, string, error) {
	var files []string
	for _, a := range args {
		info, err := os.Stat(a)
		if err != nil {
			return nil, "", spec.Invalidf("log %s: %v", a, pathError(err))
		}
		if !info.IsDir() {
			files = append(files, a)
			continue
		}
		in := map[string][]string{}
		for src, ext := range extensions {
			m, _ := filepath.Glob(filepath.Join(a, "*"+ext))
			if len(m) > 0 && (source == "auto" || source == src) && (eng == "" || eng == engine.LogEngine(src)) {
				sort.Strings(m)
				in[src] = m
			}
		}
		csvs, jsons, logs := in["csvlog"], in["jsonlog"], in["general-log"]
		if len(logs) == 0 {
			logs = in["stderr"]
		}
		switch {
		case len(csvs) > 0 && len(jsons) > 0:
			return nil, "", spec.Invalidf("log directory %s holds csvlog (*.csv) and jsonlog (*.json) files: give --source csvlog or --source jsonlog", a)
		case len(csvs) > 0:
			files = append(files, csvs...)
		case len(jsons) > 0:
			files = append(files, jsons...)
		case len(logs) > 0:
			files = append(files, logs...)
		default:
			want := "*.csv, *.json or *.log"
			if source != "auto" {
				want = "*" + extensions[source]
			} else if eng != "" {
				var exts []string
				for _, src := range engine.InfoOf(eng).LogSources {
					if e := "*" + extensions[src]; !slices.Contains(exts, e) {
						exts = append(exts, e)
					}
				}
				want = spec.OneOf(exts)
			}
			return nil, "", spec.Invalidf("log directory %s has no %s files", a, want)
		}
	}
	if source != "auto" {
		return files, source, nil
	}
	var first string
	for _, f := range files {
		s, err := sourceOf(f)
		if err != nil {
			return nil, "", err
		}
		switch {
		case s == "":
			// empty: any source
		case eng != "" && engine.LogEngine(s) != eng:
			return nil, "", spec.Invalidf("%s is a %s log (%s), not %s's: give the logs of one eng", f, engine.LogEngine(s), s, eng)
		case source == "auto":
			source, first = s, f
		case s != source:
			return nil, "", spec.Invalidf("%s is %s, %s is %s: give logs of one format, or --source", first, source, f, s)
		}
	}
	if source == "auto" { // every file is empty: any source of the eng
		source = Sources[0]
		if eng != "" {
			source = engine.InfoOf(eng).LogSources[0]
		}
	}
	return files, source, nil
}

// sourceOf is a log's format by its extension, else its first line; ""
// for an empty file.
func sourceOf(path string) (string, error) {
	switch filepath.Ext(path) {
	case ".csv":
		return "csvlog", nil
	case ".json":
		return "jsonlog", nil
	}
	f, err := os.Open(path)
	if err != nil {
		return "", spec.Invalidf("log %s: %v", path, pathError(err))
	}
	defer f.Close()
	line, err := bufio.NewReaderSize(f, 64<<10).ReadSlice('\n')
	if len(line) == 0 && (err == nil || errors.Is(err, io.EOF)) {
		return "", nil
	}
	if s := Sniff(line); s != "" {
		return s, nil
	}
	first := string(line)
	if len(first) > 60 {
		first = first[:57] + "..."
	}
	return "", spec.Invalidf("%s:1: %q is not a log obsbench reads: want PostgreSQL csvlog (*.csv), jsonlog (*.json) or stderr log (lines with \"LOG:  \" after the log_line_prefix), or a MariaDB general log",
		path, strings.TrimRight(first, "\n"))
}

// pathError is err without the operation and path that an error message
// names already.
func pathError(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

func totalSize(files []string) int64 {
	var n int64
	for _, f := range files {
		if info, err := os.Stat(f); err == nil {
			n += info.Size()
		}
	}
	return n
}
