package report

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// textWidth is the most columns a line of the text report takes: a
// terminal of 100 shows every line whole. A table row takes more only
// where a condition's name is longer than the catalog's longest.
const textWidth = 100

// wrap breaks line at spaces into lines of at most width columns, each
// after the first indented two more than line is (a hanging indent). A
// line that fits is left as it is, the spaces that align its parts
// included; a word longer than the width stays whole on a line of its
// own.
func wrap(line string, width int) []string {
	if utf8.RuneCountInString(line) <= width {
		return []string{line}
	}
	body := strings.TrimLeft(line, " ")
	indent := line[:len(line)-len(body)]
	// Split on each space, not on runs of them: the empty words keep
	// the spaces that align a line's parts where it is not broken.
	return wrapWords(strings.Split(body, " "), width, indent, indent+"  ")
}

// wrapWords lays words out as wrap does, separated by a space, the first
// line after first and the others after rest; a word may hold spaces (a
// heading's parts, which it keeps whole), and empty words are spaces
// that no line begins with.
func wrapWords(words []string, width int, first, rest string) []string {
	var lines []string
	cur, n := first, utf8.RuneCountInString(first)
	start := true // cur holds no word yet
	for _, word := range words {
		k := utf8.RuneCountInString(word)
		switch {
		case start && word == "":
			continue
		case start:
			cur, n, start = cur+word, n+k, false
		case n+1+k > width && word != "":
			lines = append(lines, strings.TrimRight(cur, " "))
			cur, n = rest+word, utf8.RuneCountInString(rest)+k
		default:
			cur, n = cur+" "+word, n+1+k
		}
	}
	return append(lines, strings.TrimRight(cur, " "))
}

// writeWrapped writes each line of text wrapped at textWidth.
func writeWrapped(w io.Writer, text string) {
	for _, line := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		for _, l := range wrap(line, textWidth) {
			fmt.Fprintln(w, l)
		}
	}
}

// notef writes a note, wrapped at textWidth.
func notef(w io.Writer, format string, args ...any) {
	writeWrapped(w, fmt.Sprintf(format, args...))
}

// wrapped writes what write writes, each line wrapped at textWidth: the
// notes of functions the markdown report shares, which it leaves whole.
func wrapped(w io.Writer, write func(io.Writer)) {
	var b bytes.Buffer
	write(&b)
	if b.Len() > 0 {
		writeWrapped(w, b.String())
	}
}
