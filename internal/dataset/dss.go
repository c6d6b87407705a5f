package dataset

import (
	"fmt"
	"time"
)

// The dss dataset (study 3's decision-support queries): an
// order-management schema of customers, products, orders and order lines,
// at scale 1 about 300,000 rows. Popularity is skewed, as in a real shop:
// low customer and product numbers are picked far more often. An order's
// total is the sum of its lines, computed from the same draws.
const (
	dssCustomers = 5_000
	dssProducts  = 1_000
	dssOrders    = 60_000
	// DSSLinesPerOrder is how many lines every order has.
	DSSLinesPerOrder = 4
	// DSSDays is the span of order dates, from DSSFirstDay.
	DSSDays = 3 * 365
)

// DSSFirstDay is the date of the first order.
var DSSFirstDay = time.Date(2023, 1, 1, 0, 0, 0, 0, time.UTC)

// DSSRegions are the customers' regions, which queries name.
var DSSRegions = []string{"north", "south", "east", "west", "central", "coast", "mountain", "islands"}

var (
	dssSegments   = []string{"consumer", "small business", "enterprise", "public", "education"}
	dssStatuses   = []string{"delivered", "delivered", "delivered", "delivered", "shipped", "open", "returned", "cancelled"}
	dssCategories = []string{"books", "music", "video", "games", "toys", "garden", "tools", "kitchen", "bath", "bedding",
		"lighting", "office", "paper", "computers", "phones", "audio", "cameras", "sports", "outdoor", "food"}
)

// DSSScale is the size of the dss dataset at scale: rows per table.
type DSSScale struct{ Customers, Products, Orders int }

// DSSSize is the number of rows of each dss table at scale, shrunk to
// 1/shrink of them (1: all; at least one row a table).
func DSSSize(scale, shrink int) DSSScale {
	shrink = max(shrink, 1)
	rows := func(base int) int { return max(base*scale/shrink, 1) }
	return DSSScale{Customers: rows(dssCustomers), Products: rows(dssProducts), Orders: rows(dssOrders)}
}

// Skewed draws 1..n from u in [0,1) with density falling as 1/sqrt: a few
// popular values. The dss-mix workload draws its parameters with it, so that
// the popular customers and products are the ones asked about most.
func Skewed(u float64, n int) int32 {
	return int32(1 + int(u*u*float64(n))%n)
}

// dssLine is line k of order i: its product, quantity and price in cents.
func dssLine(sz DSSScale, i, k int) (product int32, qty int32, cents int64) {
	r := rowRand(13, i*DSSLinesPerOrder+k)
	product = Skewed(r.Float64(), sz.Products)
	return product, int32(1 + r.IntN(5)), dssPriceCents(product)
}

// dssPriceCents is product p's price: the line's price is the price the
// product has.
func dssPriceCents(p int32) int64 { return 100 + int64(rowRand(12, int(p)).IntN(20_000)) }

func dssDataset(scale int) Dataset { return dssShrunk(scale, 1) }

// dssShrunk is dss at scale with 1/shrink of its rows.
func dssShrunk(scale, shrink int) Dataset {
	sz := DSSSize(scale, shrink)
	at := fmt.Sprintf("scale %d", scale)
	if shrink > 1 {
		at += fmt.Sprintf(" shrunk to 1/%d", shrink)
	}
	return Dataset{
		Name:        "dss",
		Description: fmt.Sprintf("study 3's order-management schema at %s: %d customers, %d products, %d orders of %d lines", at, sz.Customers, sz.Products, sz.Orders, DSSLinesPerOrder),
		Scale:       dssDataset,
		Shrink:      func(by int) Dataset { return dssShrunk(scale, by) },
		Tables: []Table{
			{
				Name: "dss_customer",
				Columns: []Column{{"customer_id", "int"}, {"name", "varchar(40)"}, {"region", "varchar(16)"},
					{"segment", "varchar(16)"}, {"created", "date"}},
				PrimaryKey: "customer_id",
				Indexes:    []Index{{Name: "dss_customer_region", Columns: []string{"region"}}},
				Rows:       sz.Customers,
				Row: func(i int) []any {
					r := rowRand(10, i)
					return []any{int32(i + 1), lastNames[r.IntN(len(lastNames))] + " " + firstNames[r.IntN(len(firstNames))],
						DSSRegions[r.IntN(len(DSSRegions))], dssSegments[r.IntN(len(dssSegments))],
						DSSFirstDay.AddDate(-3, 0, r.IntN(DSSDays))}
				},
			},
			{
				Name:       "dss_product",
				Columns:    []Column{{"product_id", "int"}, {"name", "varchar(40)"}, {"category", "varchar(24)"}, {"price", "numeric(10,2)"}},
				PrimaryKey: "product_id",
				Rows:       sz.Products,
				Row: func(i int) []any {
					p := int32(i + 1)
					r := rowRand(11, i)
					return []any{p, fmt.Sprintf("product %d", p), dssCategories[r.IntN(len(dssCategories))], float64(dssPriceCents(p)) / 100}
				},
			},
			{
				Name: "dss_orders",
				Columns: []Column{{"order_id", "int"}, {"customer_id", "int"}, {"order_date", "date"},
					{"status", "varchar(12)"}, {"total", "numeric(12,2)"}},
				PrimaryKey: "order_id",
				Indexes: []Index{{Name: "dss_orders_customer", Columns: []string{"customer_id"}},
					{Name: "dss_orders_date", Columns: []string{"order_date"}}},
				Rows: sz.Orders,
				Row: func(i int) []any {
					r := rowRand(14, i)
					var total int64
					for k := range DSSLinesPerOrder {
						_, qty, cents := dssLine(sz, i, k)
						total += int64(qty) * cents
					}
					// Orders are numbered in date order, as an OLTP system
					// numbers them.
					day := DSSFirstDay.AddDate(0, 0, i*DSSDays/sz.Orders)
					return []any{int32(i + 1), Skewed(r.Float64(), sz.Customers), day, dssStatuses[r.IntN(len(dssStatuses))], float64(total) / 100}
				},
			},
			{
				Name: "dss_order_line",
				Columns: []Column{{"order_id", "int"}, {"line_no", "int"}, {"product_id", "int"},
					{"quantity", "int"}, {"price", "numeric(10,2)"}},
				PrimaryKey: "order_id, line_no",
				Indexes:    []Index{{Name: "dss_order_line_product", Columns: []string{"product_id"}}},
				Rows:       sz.Orders * DSSLinesPerOrder,
				Row: func(j int) []any {
					i, k := j/DSSLinesPerOrder, j%DSSLinesPerOrder
					product, qty, cents := dssLine(sz, i, k)
					return []any{int32(i + 1), int32(k + 1), product, qty, float64(cents) / 100}
				},
			},
		},
	}
}

func init() { register(dssDataset(1)) }
