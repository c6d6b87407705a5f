package observer_test

import (
	"testing"

	"github.com/obsbench/obsbench/internal/observer"
)

// An event counter's match and query name the workload's tag, its
// characters taken literally in the match.
func TestEventCounterOfTag(t *testing.T) {
	c := observer.EventCounter{Match: `statement: .*{{tag}}`, Query: "SELECT count(*) FROM log WHERE q LIKE '%{{tag}}%'"}
	re, err := c.MatchOf("/*ob.1*/")
	if err != nil {
		t.Fatal(err)
	}
	for line, want := range map[string]bool{
		"LOG:  statement: SELECT 1 /*ob.1*/": true,
		"LOG:  statement: SELECT 1 /*obx1*/": false, // '.' is not a wildcard in the tag
		"LOG:  duration: 1 ms /*ob.1*/":      false,
	} {
		if re.MatchString(line) != want {
			t.Errorf("MatchOf: %q matched = %v; want %v", line, !want, want)
		}
	}
	if got, want := c.QueryOf("ob1"), "SELECT count(*) FROM log WHERE q LIKE '%ob1%'"; got != want {
		t.Errorf("QueryOf = %q; want %q", got, want)
	}
	if _, err := (observer.EventCounter{Match: "(unclosed"}).MatchOf("t"); err == nil {
		t.Error("MatchOf of a match that is no regular expression: no error")
	}
}
