package report

import (
	"bytes"
	"slices"
	"testing"
)

func TestWrap(t *testing.T) {
	for _, tt := range []struct {
		name, line string
		width      int
		want       []string
	}{
		{"fits", "a short note", 20, []string{"a short note"}},
		{"fits exactly", "0123456789", 10, []string{"0123456789"}},
		{"empty", "", 10, []string{""}},
		{"hanging indent", "one two three four five", 10, []string{"one two", "  three", "  four", "  five"}},
		{"indented line", "  one two three four", 10, []string{"  one two", "    three", "    four"}},
		{"word longer than the width", "a 0123456789ab c", 10, []string{"a", "  0123456789ab", "  c"}},
		{"runes, not bytes", "µs µs µs µs", 8, []string{"µs µs µs", "  µs"}},
		{"aligned line that fits keeps its spaces", "name      value", 20, []string{"name      value"}},
		{"spaces at a break dropped", "one      two three", 8, []string{"one", "  two", "  three"}},
	} {
		if got := wrap(tt.line, tt.width); !slices.Equal(got, tt.want) {
			t.Errorf("%s: wrap(%q, %d) = %q; want %q", tt.name, tt.line, tt.width, got, tt.want)
		}
	}
}

// A heading's parts are words of their own: wrapped between them, never
// within one.
func TestWrapWordsKeepsParts(t *testing.T) {
	words := []string{"obsbench: postgres 15,", "workload credit-top1,", "duet of twin servers, 16 phases x 2s"}
	want := []string{"obsbench: postgres 15, workload credit-top1,", "  duet of twin servers, 16 phases x 2s"}
	if got := wrapWords(words, 50, "", "  "); !slices.Equal(got, want) {
		t.Errorf("wrapWords = %q; want %q", got, want)
	}
}

// A table's words read left-aligned, its figures right-aligned, no line
// ending in spaces.
func TestColumns(t *testing.T) {
	c := columns{head: []string{"condition", "stmts/s", "verdict"}, left: []bool{true, false, true}}
	c.add("a", "1,000", "slower")
	c.add("longer-name", "7", "-")
	var b bytes.Buffer
	if err := c.write(&b); err != nil {
		t.Fatal(err)
	}
	want := "condition    stmts/s  verdict\n" +
		"a              1,000  slower\n" +
		"longer-name        7  -\n"
	if b.String() != want {
		t.Errorf("table:\n%s\nwant:\n%s", b.String(), want)
	}
}
