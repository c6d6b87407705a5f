package dataset_test

import (
	"context"
	"errors"
	"reflect"
	"slices"
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
	want := map[string]int{"dss_customer": 5_000, "dss_product": 1_000, "dss_orders": 60_000, "dss_order_line": 240_000}
	if !reflect.DeepEqual(rows, want) {
		t.Errorf("dss rows %v; want %v", rows, want)
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
	for _, tc := range []struct {
		name  string
		scale int
		want  string
	}{
		{"credit", 2, "has one size"},
		{"dss", 0, "want 1 or more"},
		{"nope", 1, "unknown dataset"},
	} {
		if _, err := dataset.Scaled(tc.name, tc.scale); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Scaled(%s, %d) = %v; want an error with %q", tc.name, tc.scale, err, tc.want)
		}
	}
}

// dss at scale 2 is as consistent as at scale 1, scale 1 is the registered
// dataset, and popularity is skewed: the first customer and product have
// many times their mean share.
func TestDSSScaleAndSkew(t *testing.T) {
	d, _ := dataset.Lookup("dss")
	d1, err := dataset.Scaled("dss", 1)
	if err != nil {
		t.Fatal(err)
	}
	for i, tb := range d.Tables {
		if !reflect.DeepEqual(tb.Row(tb.Rows-1), d1.Tables[i].Row(tb.Rows-1)) {
			t.Errorf("Scaled(dss, 1) %s differs from the registered one", tb.Name)
		}
	}
	d2, _ := dataset.Scaled("dss", 2)
	sz := dataset.DSSSize(2, 1)
	orders, lines := d2.Tables[2], d2.Tables[3]
	perCustomer := make([]int, sz.Customers+1)
	for i := range orders.Rows {
		o := orders.Row(i)
		perCustomer[o[1].(int32)]++
		if i%997 != 0 {
			continue
		}
		var cents int64
		for k := range dataset.DSSLinesPerOrder {
			l := lines.Row(i*dataset.DSSLinesPerOrder + k)
			if p := int(l[2].(int32)); p < 1 || p > sz.Products {
				t.Fatalf("scale 2: line %v has no product", l)
			}
			cents += int64(l[3].(int32)) * int64(l[4].(float64)*100+0.5)
		}
		if got := int64(o[4].(float64)*100 + 0.5); got != cents {
			t.Errorf("scale 2: order %d total %d cents; its lines sum to %d", i+1, got, cents)
		}
	}
	if mean := sz.Orders / sz.Customers; perCustomer[1] < 20*mean || perCustomer[0] != 0 {
		t.Errorf("customer 1 has %d orders, the mean is %d; want a popular customer", perCustomer[1], mean)
	}
	perProduct := make([]int, sz.Products+1)
	for j := range lines.Rows {
		perProduct[lines.Row(j)[2].(int32)]++
	}
	if mean := lines.Rows / sz.Products; perProduct[1] < 20*mean {
		t.Errorf("product 1 is on %d lines, the mean is %d; want a popular product", perProduct[1], mean)
	}
	var indexed []string
	for _, tb := range d.Tables {
		for _, ix := range tb.Indexes {
			indexed = append(indexed, tb.Name+"("+strings.Join(ix.Columns, ",")+")")
		}
	}
	for _, ix := range []string{"dss_orders(customer_id)", "dss_orders(order_date)", "dss_order_line(product_id)"} {
		if !slices.Contains(indexed, ix) {
			t.Errorf("no index %s; have %v", ix, indexed)
		}
	}
}

// Verify counts every table and names the first that is short, or that
// could not be counted.
func TestVerify(t *testing.T) {
	d := dataset.Dataset{Name: "d", Tables: []dataset.Table{{Name: "a", Rows: 2}, {Name: "b", Rows: 3}}}
	rows := map[string]int64{"a": 2, "b": 3}
	count := func(_ context.Context, table string) (int64, error) {
		if n, ok := rows[table]; ok {
			return n, nil
		}
		return 0, errors.New("no such table")
	}
	if err := d.Verify(context.Background(), count); err != nil {
		t.Errorf("Verify: %v", err)
	}
	rows["b"] = 2
	if err := d.Verify(context.Background(), count); err == nil || err.Error() != "dataset d: table b has 2 rows, want 3" {
		t.Errorf("Verify of a short table: %v", err)
	}
	delete(rows, "a")
	if err := d.Verify(context.Background(), count); err == nil || err.Error() != "dataset d: count a: no such table" {
		t.Errorf("Verify of a missing table: %v", err)
	}
}

// Shrunk is relative to the dataset's scale, not to a shrink already
// made: 1/10 then 1 is the whole scale again; a dataset of one size
// refuses any shrink but 1.
func TestShrunk(t *testing.T) {
	d2, _ := dataset.Scaled("dss", 2)
	tenth, err := d2.Shrunk(10)
	if err != nil {
		t.Fatal(err)
	}
	whole, err := tenth.Shrunk(1)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := tenth.Tables[2].Rows, d2.Tables[2].Rows/10; got != want {
		t.Errorf("orders at 1/10: %d; want %d", got, want)
	}
	if whole.Tables[2].Rows != d2.Tables[2].Rows {
		t.Errorf("orders at 1/10 then 1: %d; want %d", whole.Tables[2].Rows, d2.Tables[2].Rows)
	}
	credit, _ := dataset.Lookup("credit")
	if _, err := credit.Shrunk(10); err == nil {
		t.Error("credit shrunk to 1/10: no error")
	}
	if d, err := credit.Shrunk(1); err != nil || d.Name != "credit" {
		t.Errorf("credit shrunk to 1/1: %v, %v", d.Name, err)
	}
}
