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

// dss: every order's total is the sum of its lines, rows are reproducible,
// lines point at existing orders and products, and scale multiplies rows.
func TestDSS(t *testing.T) {
	d, err := dataset.Lookup("dss")
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]int{}
	for _, tb := range d.Tables {
		rows[tb.Name] = tb.Rows
		for _, i := range []int{0, tb.Rows / 3, tb.Rows - 1} {
			if a, b := tb.Row(i), tb.Row(i); !reflect.DeepEqual(a, b) || len(a) != len(tb.Columns) {
				t.Errorf("%s row %d: %v, then %v (%d columns)", tb.Name, i, a, b, len(tb.Columns))
			}
		}
	}
	if total := rows["dss_customer"] + rows["dss_product"] + rows["dss_orders"] + rows["dss_order_line"]; total < 200_000 || total > 500_000 {
		t.Errorf("dss has %d rows; want a few hundred thousand", total)
	}
	orders, lines := d.Tables[2], d.Tables[3]
	for _, i := range []int{0, 1, 777, orders.Rows - 1} {
		var cents int64
		for k := range dataset.DSSLinesPerOrder {
			l := lines.Row(i*dataset.DSSLinesPerOrder + k)
			if l[0].(int32) != int32(i+1) || l[2].(int32) < 1 || int(l[2].(int32)) > rows["dss_product"] {
				t.Fatalf("line %v of order %d", l, i+1)
			}
			cents += int64(l[3].(int32)) * int64(l[4].(float64)*100+0.5)
		}
		if got := int64(orders.Row(i)[4].(float64)*100 + 0.5); got != cents {
			t.Errorf("order %d total %d cents; its lines sum to %d", i+1, got, cents)
		}
	}
	d2, err := dataset.Scaled("dss", 2)
	if err != nil {
		t.Fatal(err)
	}
	for i, tb := range d2.Tables {
		if tb.Rows != 2*d.Tables[i].Rows {
			t.Errorf("scale 2: %s has %d rows; want %d", tb.Name, tb.Rows, 2*d.Tables[i].Rows)
		}
	}
	if _, err := dataset.Scaled("credit", 2); err == nil || !strings.Contains(err.Error(), "has one size") {
		t.Errorf("Scaled(credit, 2) = %v; want a refusal", err)
	}
}
