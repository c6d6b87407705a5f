package capture

// The logs a capture reads: directories expanded into their files, and
// the files' source told from their names or first line.

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// logFiles expands directories into their log files, sorted by name
// (PostgreSQL's rotated file names sort by time), and settles the source:
// the one given, or the one every file is, by its extension or first
// line. A directory gives the files of one source (dirFiles).
func logFiles(args []string, source, eng string) ([]string, Source, error) {
	allowed := SourcesOf(eng)
	if source != "auto" {
		s, _ := SourceNamed(source)
		allowed = []Source{s}
	}
	var files []string
	for _, a := range args {
		info, err := os.Stat(a)
		if err != nil {
			return nil, Source{}, invalidf("log %s: %v", a, pathError(err))
		}
		if !info.IsDir() {
			files = append(files, a)
			continue
		}
		in, err := dirFiles(a, allowed)
		if err != nil {
			return nil, Source{}, err
		}
		files = append(files, in...)
	}
	if source != "auto" {
		return files, allowed[0], nil
	}
	var found Source
	var first string
	for _, f := range files {
		s, err := sourceOf(f)
		if err != nil {
			return nil, Source{}, err
		}
		switch {
		case s.Name == "":
			// empty: any source
		case eng != "" && s.Engine != eng:
			return nil, Source{}, invalidf("%s is a %s log (%s), not %s's: give the logs of one engine", f, s.Engine, s.Name, eng)
		case found.Name == "":
			found, first = s, f
		case s.Name != found.Name:
			return nil, Source{}, invalidf("%s is %s, %s is %s: give logs of one format, or --source", first, found.Name, f, s.Name)
		}
	}
	if found.Name == "" { // every file is empty: any source of the engine
		found = allowed[0]
	}
	return files, found, nil
}

// dirFiles are the log files in directory dir of the allowed sources:
// those of the one source whose extension only it has, where the
// directory has such files (PostgreSQL's csvlog directory also holds the
// stderr log's *.log files, which are read only where there is no csvlog
// or jsonlog), else those of the shared extension.
func dirFiles(dir string, allowed []Source) ([]string, error) {
	var own, shared []Source
	byExt := map[string][]string{}
	for _, s := range allowed {
		m, _ := filepath.Glob(filepath.Join(dir, "*"+s.Ext))
		sort.Strings(m)
		byExt[s.Ext] = m
		switch {
		case len(m) == 0:
		case sharedExt(s.Ext):
			shared = append(shared, s)
		default:
			own = append(own, s)
		}
	}
	switch {
	case len(own) > 1:
		var has, give []string
		for _, s := range own {
			has = append(has, fmt.Sprintf("%s (*%s)", s.Name, s.Ext))
			give = append(give, "--source "+s.Name)
		}
		return nil, invalidf("log directory %s holds %s files: give %s", dir, strings.Join(has, " and "), strings.Join(give, " or "))
	case len(own) == 1:
		return byExt[own[0].Ext], nil
	case len(shared) > 0:
		return byExt[shared[0].Ext], nil
	}
	var exts []string
	for _, s := range allowed {
		if e := "*" + s.Ext; !slices.Contains(exts, e) {
			exts = append(exts, e)
		}
	}
	return nil, invalidf("log directory %s has no %s files", dir, oneOf(exts))
}

// sharedExt says more than one registered source has extension ext: a
// file's extension then does not say its source.
func sharedExt(ext string) bool {
	n := 0
	for _, s := range Sources() {
		if s.Ext == ext {
			n++
		}
	}
	return n > 1
}

// sourceOf is a log's source by its extension, where only one source has
// it, else by its first line; none for an empty file.
func sourceOf(path string) (Source, error) {
	for _, s := range Sources() {
		if filepath.Ext(path) == s.Ext && !sharedExt(s.Ext) {
			return s, nil
		}
	}
	f, err := os.Open(path)
	if err != nil {
		return Source{}, invalidf("log %s: %v", path, pathError(err))
	}
	defer f.Close()
	line, err := bufio.NewReaderSize(f, 64<<10).ReadSlice('\n')
	if len(line) == 0 && (err == nil || errors.Is(err, io.EOF)) {
		return Source{}, nil
	}
	if s, ok := SourceNamed(Sniff(line)); ok {
		return s, nil
	}
	first := string(line)
	if len(first) > 60 {
		first = first[:57] + "..."
	}
	products, describes := byProduct(Sources(), func(s Source) string { return s.Describe })
	wants := make([]string, len(products))
	for i, p := range products {
		wants[i] = p + " " + oneOf(describes[i])
	}
	return Source{}, invalidf("%s:1: %q is not a log obsbench reads: want %s", path, strings.TrimRight(first, "\n"), strings.Join(wants, ", or a "))
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
