// Command mariadb-driver measures what obsbench's MariaDB driver costs the
// machine: it runs credit-top1 on a managed MariaDB and prints the
// driver's and the server's CPU per statement, optionally with a CPU
// profile of the driver. It has no peer yet (sysbench would be one); see
// RESULT.md for what it showed.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime/pprof"
	"syscall"
	"time"

	"github.com/obsbench/obsbench/internal/collect"
	"github.com/obsbench/obsbench/internal/dataset"
	"github.com/obsbench/obsbench/internal/driver"
	"github.com/obsbench/obsbench/internal/engine/mariadb"
	"github.com/obsbench/obsbench/internal/server"
	"github.com/obsbench/obsbench/internal/workload"
)

func main() {
	clients := flag.Int("clients", 16, "client sessions")
	duration := flag.Duration("duration", 10*time.Second, "measured time of each run")
	runs := flag.Int("runs", 3, "measured runs")
	profile := flag.String("cpuprofile", "", "write a CPU profile of the driver (this process) over the measured runs")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *clients, *runs, *duration, *profile); err != nil {
		fmt.Fprintln(os.Stderr, "mariadb-driver:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, clients, runs int, d time.Duration, profile string) error {
	m, err := server.StartMariaDB(ctx, server.MariaDBOptions{})
	if err != nil {
		return err
	}
	defer m.Stop()
	s, err := mariadb.New(m.DSN("obsbench"), mariadb.Options{Password: m.Password()})
	if err != nil {
		return err
	}
	ds, _ := dataset.Lookup("credit")
	if err := s.Load(ctx, ds); err != nil {
		return err
	}
	pid, err := m.PID()
	if err != nil {
		return err
	}
	wl, _ := workload.Lookup("credit-top1")
	dial := func(ctx context.Context) (driver.Session, error) { return s.Connect(ctx) }
	if profile != "" {
		f, err := os.Create(profile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	fmt.Printf("| run | statements/s | driver CPU µs/stmt | server CPU µs/stmt |\n|---:|---:|---:|---:|\n")
	for i := 1; i <= runs; i++ {
		self0, err := collect.ProcessCPU(os.Getpid())
		if err != nil {
			return err
		}
		srv0, err := collect.ProcessCPU(pid)
		if err != nil {
			return err
		}
		res, err := driver.Run(ctx, driver.Config{Clients: clients, Warmup: time.Second, Duration: d, Procs: 1}, dial, wl.New())
		if err != nil {
			return err
		}
		self1, _ := collect.ProcessCPU(os.Getpid())
		srv1, _ := collect.ProcessCPU(pid)
		n := float64(res.Executed)
		fmt.Printf("| %d | %.0f | %.2f | %.2f |\n", i, res.Throughput, 1e6*(self1-self0)/n, 1e6*(srv1-srv0)/n)
	}
	return nil
}
