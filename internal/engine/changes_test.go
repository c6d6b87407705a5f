package engine

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/obsbench/obsbench/internal/journal"
)

// Changes are journaled as recorded and undone newest first; an undo
// that fails leaves its change pending, in the journal and for the next
// Undo, and the others are marked undone.
func TestChangesUndoNewestFirst(t *testing.T) {
	j, err := journal.Create(t.TempDir(), "test")
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	cs := NewChanges[string](j)
	for _, c := range []string{"a", "b", "c"} {
		if err := cs.Record(c); err != nil {
			t.Fatal(err)
		}
	}
	if j.Pending() != 3 {
		t.Fatalf("%d changes pending in the journal; want 3", j.Pending())
	}
	var order []string
	undone, err := cs.Undo(func(c string) error {
		order = append(order, c)
		if c == "b" {
			return errors.New("b refused")
		}
		return nil
	})
	if err == nil || !slices.Equal(order, []string{"c", "b", "a"}) || !slices.Equal(undone, []string{"c", "a"}) {
		t.Errorf("undo order %v, undone %v, err %v; want c b a, c a, b's error", order, undone, err)
	}
	if cs.Len() != 1 || j.Pending() != 1 {
		t.Errorf("%d changes kept, %d pending in the journal; want b in both", cs.Len(), j.Pending())
	}
	_, pending, err := journal.Read(j.Path())
	if err != nil || len(pending) != 1 {
		t.Fatalf("journal: %v, %d pending", err, len(pending))
	}
	var left string
	if err := json.Unmarshal(pending[0].Change, &left); err != nil || left != "b" {
		t.Errorf("pending in the journal: %s (%v); want b", pending[0].Change, err)
	}
	if undone, err := cs.Undo(func(string) error { return nil }); err != nil || !slices.Equal(undone, []string{"b"}) || j.Pending() != 0 {
		t.Errorf("second Undo: %v, %v, %d pending; want b undone, none pending", undone, err, j.Pending())
	}
}

// Without a journal changes are only kept; a kept change (read back from
// a journal) is undone without being journaled again.
func TestChangesWithoutJournal(t *testing.T) {
	cs := NewChanges[int](nil)
	if err := cs.Record(1); err != nil {
		t.Fatal(err)
	}
	cs.Keep(2)
	undone, err := cs.Undo(func(int) error { return nil })
	if err != nil || !slices.Equal(undone, []int{2, 1}) || cs.Len() != 0 {
		t.Errorf("Undo = %v, %v, %d left; want 2 1, none left", undone, err, cs.Len())
	}
}

// Journaled changes read back in their order are undone newest first; one
// that cannot be read is an error that names it, before anything is undone.
func TestJournaled(t *testing.T) {
	raw := []json.RawMessage{json.RawMessage(`"a"`), json.RawMessage(`"b"`)}
	cs, err := Journaled[string](nil, raw)
	if err != nil || !slices.Equal(cs.Pending(), []string{"a", "b"}) {
		t.Fatalf("Journaled = %v, %v; want a b", cs.Pending(), err)
	}
	if undone, err := cs.Undo(func(string) error { return nil }); err != nil || !slices.Equal(undone, []string{"b", "a"}) {
		t.Errorf("Undo = %v, %v; want b a", undone, err)
	}
	if _, err := Journaled[string](nil, append(raw, json.RawMessage(`7`))); err == nil || !strings.Contains(err.Error(), "journaled change 7") {
		t.Errorf("Journaled with a number among strings = %v; want an error naming it", err)
	}
}

// A sink is taken down only after a revert that succeeded, and stays for
// the next attempt when taking it down fails.
func TestSinkClosesAfterARevert(t *testing.T) {
	closes, fail := 0, true
	var s Sink
	s.Set(func() error {
		closes++
		if fail {
			return errors.New("busy")
		}
		return nil
	})
	reverted := errors.New("revert failed")
	s.CloseAfter(&reverted)
	if closes != 0 {
		t.Fatalf("closed after a failed revert")
	}
	var err error
	s.CloseAfter(&err)
	if closes != 1 || err == nil {
		t.Fatalf("closes %d, err %v; want one attempt that failed", closes, err)
	}
	fail, err = false, nil
	s.CloseAfter(&err)
	s.CloseAfter(&err)
	if closes != 2 || err != nil {
		t.Errorf("closes %d, err %v; want the sink taken down once more, then no more", closes, err)
	}
}
