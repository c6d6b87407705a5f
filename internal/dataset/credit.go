package dataset

import (
	"math"
	"math/rand/v2"
	"strconv"
	"time"
)

// The credit dataset of study 1: members and their payments, with the row
// counts of the study's database.
const (
	creditMembers  = 10000
	creditPayments = 15554
)

var (
	lastNames  = []string{"ANDERSON", "BARR", "CHEN", "DIAZ", "EKBERG", "FOSTER", "GARCIA", "HANSEN", "IVANOV", "JENSEN", "KIM", "LARSEN", "MILLER", "NGUYEN", "OKAFOR", "PETERSEN", "QUINN", "ROSSI", "SATO", "TANAKA", "URBAN", "VARGA", "WANG", "XU", "YILMAZ", "ZHANG"}
	firstNames = []string{"ANNA", "BEN", "CARLA", "DAVID", "EVA", "FRANK", "GRETA", "HUGO", "INES", "JONAS", "KARIN", "LEO", "MAJA", "NILS", "OLGA", "PAUL"}
	cities     = []string{"Aarhus", "Berlin", "Chicago", "Dublin", "Espoo", "Florence", "Graz", "Helsinki", "Izmir", "Kyoto", "Lyon", "Madrid", "Nagoya", "Oslo", "Porto"}
	epoch      = time.Date(1999, 1, 1, 0, 0, 0, 0, time.UTC)
)

// rowRand is the random source for row i of a table: seeding by (table,
// row) makes every row reproducible on its own, whatever order rows are
// produced in.
func rowRand(table uint64, i int) *rand.Rand {
	return rand.New(rand.NewPCG(table, uint64(i)))
}

func cents(r *rand.Rand, max float64) float64 {
	return math.Round(r.Float64()*max*100) / 100
}

func init() {
	register(Dataset{
		Name:        "credit",
		Description: "study 1's credit database: member (10,000 rows) and payment (15,554 rows)",
		Tables: []Table{
			{
				Name: "member",
				Columns: []Column{
					{"member_no", "int"}, {"lastname", "varchar(15)"}, {"firstname", "varchar(15)"},
					{"middleinitial", "varchar(1)"}, {"street", "varchar(30)"}, {"city", "varchar(15)"},
					{"region_no", "int"}, {"issue_dt", "date"}, {"expr_dt", "date"},
					{"prev_balance", "numeric(10,2)"}, {"curr_balance", "numeric(10,2)"},
				},
				PrimaryKey: "member_no",
				Indexes:    []Index{{Name: "member_lastname", Columns: []string{"lastname"}}},
				Rows:       creditMembers,
				Row: func(i int) []any {
					r := rowRand(1, i)
					issued := epoch.AddDate(0, 0, r.IntN(365*3))
					return []any{
						int32(i + 1), lastNames[r.IntN(len(lastNames))], firstNames[r.IntN(len(firstNames))],
						string(rune('A' + r.IntN(26))), "Street " + strconv.Itoa(1+r.IntN(999)), cities[r.IntN(len(cities))],
						int32(1 + r.IntN(9)), issued, issued.AddDate(3, 0, 0),
						cents(r, 5000), cents(r, 5000),
					}
				},
			},
			{
				Name: "payment",
				Columns: []Column{
					{"payment_no", "int"}, {"member_no", "int"}, {"payment_dt", "date"},
					{"payment_amt", "numeric(10,2)"}, {"statement_no", "int"},
				},
				PrimaryKey: "payment_no",
				Indexes:    []Index{{Name: "payment_member", Columns: []string{"member_no"}}},
				Rows:       creditPayments,
				Row: func(i int) []any {
					r := rowRand(2, i)
					return []any{
						int32(i + 1), int32(1 + r.IntN(creditMembers)), epoch.AddDate(0, 0, r.IntN(365*3)),
						cents(r, 2000), int32(1 + r.IntN(20000)),
					}
				},
			},
		},
	})
}
