package workload

import (
	"context"
	"strconv"
	"time"
)

// creditTop1SQL is study 1's query: the first row of a join of payment and
// member, run in a tight loop. TOP 1 becomes LIMIT 1. The trailing comment is
// the workload's tag.
const creditTop1SQL = "SELECT m.member_no, m.lastname, p.payment_no, p.payment_dt, p.payment_amt " +
	"FROM payment p JOIN member m ON m.member_no = p.member_no LIMIT 1 /* obsbench-credit-top1 */"

func init() {
	Register(Meta{
		Name:           "credit-top1",
		Description:    "study 1: SELECT the first row of payment JOIN member in a loop, read-only and CPU-bound",
		Dataset:        "credit",
		Tag:            "obsbench-credit-top1",
		DefaultClients: 16,
		New:            func() Workload { return loop{sql: creditTop1SQL} },
	})
}

// loop runs one prepared statement without parameters over and over,
// after clientWork of the session's own CPU each time (0: none).
type loop struct {
	sql        string
	clientWork time.Duration
}

// Loop is a workload that runs sql, a statement without parameters, over
// and over in every session: obsbench's own measurements of one
// statement's cost (a calibration loop iteration).
func Loop(sql string) Workload { return loop{sql: sql} }

func (l loop) Worker(ctx context.Context, conn Conn, _ int) (Op, error) {
	stmt, err := conn.Prepare(ctx, l.sql)
	if err != nil {
		return nil, err
	}
	if l.clientWork <= 0 {
		return func(ctx context.Context) error { return stmt.Exec(ctx) }, nil
	}
	return func(ctx context.Context) error {
		spin(l.clientWork)
		Started(ctx)
		return stmt.Exec(ctx)
	}, nil
}

// spin keeps the CPU busy for d: a client's own work between statements,
// as a heavier application or driver would do it.
func spin(d time.Duration) {
	for t0 := time.Now(); time.Since(t0) < d; {
	}
}

// clientWorkParam makes a driver heavier on purpose: the duet holds each
// twin's server to its quota and its load apart, so the overhead it
// prints is the server's and must not move when the driver's CPU does.
var clientWorkParam = Param{Name: "client-work", Default: 0, Min: 0, Max: 10_000,
	Usage: "credit-top1-calibrated: µs of CPU each session spends before each statement, in the driver (a heavier client; the duet's figure is the server's and should not move with it)"}

// creditCalibratedSQL is creditTop1SQL plus a call of obsbench_calibrate(),
// which does as many loop iterations of server work as the one row of
// obsbench_calibration says, after one that every call does: 0 more in
// the baseline, more under obsbench's calibration observer, whose cost per
// statement is therefore the iterations' alone (entering the loop is in
// the baseline too) and known.
const creditCalibratedSQL = "SELECT m.member_no, m.lastname, p.payment_no, p.payment_dt, p.payment_amt, obsbench_calibrate() " +
	"FROM payment p JOIN member m ON m.member_no = p.member_no LIMIT 1 /* obsbench-credit-top1-calibrated */"

// Calibrated is the workload whose statements call obsbench_calibrate().
const Calibrated = "credit-top1-calibrated"

func init() {
	Register(Meta{
		Name:           Calibrated,
		Description:    "credit-top1 plus a server function whose work per statement obsbench's calibration observer sets",
		Dataset:        "credit",
		Tag:            "obsbench-credit-top1-calibrated",
		Dialects:       []Dialect{PostgreSQL}, // plpgsql
		DefaultClients: 16,
		Setup:          calibrationSetup,
		Params:         []Param{clientWorkParam},
		Build: func(p map[string]int) Workload {
			return loop{sql: creditCalibratedSQL, clientWork: time.Duration(p["client-work"]) * time.Microsecond}
		},
	})
}

// calibrationSetup creates obsbench_calibrate() and the row that sets its
// work: 0 loops until a calibration observer sets more.
var calibrationSetup = []string{
	"CREATE TABLE IF NOT EXISTS obsbench_calibration (loops int NOT NULL)",
	"INSERT INTO obsbench_calibration SELECT 0 WHERE NOT EXISTS (SELECT 1 FROM obsbench_calibration)",
	`CREATE OR REPLACE FUNCTION obsbench_calibrate() RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE n int; s bigint := 0;
BEGIN
  SELECT loops INTO n FROM obsbench_calibration;
  FOR i IN 0..n LOOP s := s + i; END LOOP;
  RETURN s;
END $$`,
}

// CalibrationSQL returns the statements that set the calibration work to
// loops iterations per statement (credit-top1-calibrated).
func CalibrationSQL(loops int) string {
	return "UPDATE obsbench_calibration SET loops = " + strconv.Itoa(loops)
}
