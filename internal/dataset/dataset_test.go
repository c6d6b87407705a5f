package dataset_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/obsbench/obsbench/internal/dataset"
)

func TestCreditIsDeterministic(t *testing.T) {
	d, err := dataset.Lookup("credit")
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]int{"member": 10000, "payment": 15554}
	for _, tb := range d.Tables {
		if tb.Rows != rows[tb.Name] {
			t.Errorf("%s has %d rows; want %d", tb.Name, tb.Rows, rows[tb.Name])
		}
		for _, i := range []int{0, 1, tb.Rows / 2, tb.Rows - 1} {
			a, b := tb.Row(i), tb.Row(i)
			if !reflect.DeepEqual(a, b) {
				t.Errorf("%s row %d differs between calls: %v vs %v", tb.Name, i, a, b)
			}
			if len(a) != len(tb.Columns) {
				t.Errorf("%s row %d has %d values for %d columns", tb.Name, i, len(a), len(tb.Columns))
			}
		}
		if reflect.DeepEqual(tb.Row(0), tb.Row(1)) {
			t.Errorf("%s rows 0 and 1 are equal", tb.Name)
		}
	}
	// Every payment belongs to an existing member, so the join returns rows.
	pay := d.Tables[1]
	for i := 0; i < pay.Rows; i++ {
		if m := pay.Row(i)[1].(int32); m < 1 || m > 10000 {
			t.Fatalf("payment %d has member_no %d; want 1..10000", i, m)
		}
	}
	if got := d.Tables[0].CreateSQL(); !strings.HasPrefix(got, "CREATE TABLE member (member_no int NOT NULL, lastname varchar(15) NOT NULL") {
		t.Errorf("CreateSQL = %q", got)
	}
	if _, err := dataset.Lookup("nope"); err == nil || !strings.Contains(err.Error(), "known: credit") {
		t.Errorf("Lookup(nope) = %v; want an error listing credit", err)
	}
}
