package journal

import (
	"errors"
	"os"
	"testing"
)

type change struct {
	Setting string `json:"setting"`
}

// Changes recorded and not undone are pending, in order; a torn last line
// is ignored; marking the rest undone removes the journal.
func TestJournalPendingAndRestore(t *testing.T) {
	dir := t.TempDir()
	j, err := Create(dir, "host=db user=u")
	if err != nil {
		t.Fatal(err)
	}
	a, _ := j.Record(change{"a"})
	b, _ := j.Record(change{"b"})
	c, _ := j.Record(change{"c"})
	if err := j.Undone(b); err != nil {
		t.Fatal(err)
	}
	var pe *PendingError
	if err := j.Close(); !errors.As(err, &pe) || pe.Changes != 2 {
		t.Fatalf("Close = %v; want a PendingError for 2 changes", err)
	}
	// A crash while a line was written.
	f, _ := os.OpenFile(j.Path(), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"seq":9,"kind":"cha`)
	f.Close()

	h, pending, err := Read(j.Path())
	if err != nil {
		t.Fatal(err)
	}
	if h.Server != "host=db user=u" || h.PID != os.Getpid() {
		t.Errorf("header %+v", h)
	}
	if len(pending) != 2 || pending[0].Seq != a || pending[1].Seq != c || string(pending[0].Change) != `{"setting":"a"}` {
		t.Fatalf("pending %+v; want a and c", pending)
	}
	if err := MarkUndone(j.Path(), []int{a}); err != nil {
		t.Fatal(err)
	}
	if _, pending, _ = Read(j.Path()); len(pending) != 1 || pending[0].Seq != c {
		t.Fatalf("after undoing a, pending %+v; want c", pending)
	}
	if err := MarkUndone(j.Path(), []int{c}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(j.Path()); !os.IsNotExist(err) {
		t.Errorf("journal still there with nothing left to undo")
	}
}

// A journal whose changes were all undone is removed on Close; a file
// that is not a journal is refused.
func TestJournalCleanCloseAndBadFile(t *testing.T) {
	dir := t.TempDir()
	j, err := Create(dir, "x")
	if err != nil {
		t.Fatal(err)
	}
	s, _ := j.Record(change{"a"})
	j.Undone(s)
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	if left, _ := List(dir); len(left) != 0 {
		t.Errorf("journals left: %v", left)
	}
	bad := dir + "/journal-bad.jsonl"
	os.WriteFile(bad, []byte("{\"seq\":1,\"kind\":\"change\"}\n"), 0o600)
	if _, _, err := Read(bad); err == nil {
		t.Errorf("a journal without header was read")
	}
}
