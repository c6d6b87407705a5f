// Command replay-vs-pgreplay compares obsbench's replay with pgreplay, a
// replay tool for PostgreSQL logs: the same captured log, replayed as fast
// as the server answers, against the same managed server, alternately in a
// seeded random order for several rounds. It writes a markdown report and
// prints it. See README.md.
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/obsbench/obsbench/bench/internal/sidebyside"
	"github.com/obsbench/obsbench/internal/capture"
	"github.com/obsbench/obsbench/internal/dataset"
	"github.com/obsbench/obsbench/internal/driver"
	"github.com/obsbench/obsbench/internal/engine/postgres"
	"github.com/obsbench/obsbench/internal/stats"
	"github.com/obsbench/obsbench/internal/workload"
)

type config struct {
	rounds, sessions, statements int
	out                          string
	seed                         uint64
}

func main() {
	var c config
	flag.IntVar(&c.rounds, "rounds", 5, "rounds; each replays the log once with each tool, in a seeded random order")
	flag.IntVar(&c.sessions, "sessions", 8, "captured sessions (each replayed on its own connection by both tools)")
	flag.IntVar(&c.statements, "statements", 20000, "statements per captured session")
	flag.StringVar(&c.out, "out", "bench/replay-vs-pgreplay/RESULT.md", "markdown report to write")
	flag.Uint64Var(&c.seed, "seed", 0, "seed of the run order (default: from the clock)")
	flag.Parse()
	if c.rounds < 1 || c.sessions < 1 || c.statements < 1 {
		fail(fmt.Errorf("-rounds, -sessions and -statements must be at least 1"))
	}
	c.seed = sidebyside.Seed(c.seed)
	sidebyside.Main("replay-vs-pgreplay", func(ctx context.Context) error { return run(ctx, c) })
}

func fail(err error) { sidebyside.Fail("replay-vs-pgreplay", err) }

func logf(format string, args ...any) { fmt.Fprintf(os.Stderr, format+"\n", args...) }

// pgreplayBinary finds pgreplay, installing Debian's package when it is
// missing: the comparison needs the peer, and nothing installed by hand.
func pgreplayBinary(ctx context.Context) (string, error) {
	if p, err := exec.LookPath("pgreplay"); err == nil {
		return p, nil
	}
	logf("installing pgreplay (apt-get install -y pgreplay)")
	cmd := exec.CommandContext(ctx, "apt-get", "install", "-y", "pgreplay")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("apt-get install pgreplay: %w\n%s", err, out)
	}
	return exec.LookPath("pgreplay")
}

// adHoc is the captured workload: point lookups of the credit dataset as
// ad hoc text (the simple query protocol, what both tools replay the same
// way), n per session.
type adHoc struct{ n int }

func (a adHoc) Worker(ctx context.Context, conn workload.Conn, session int) (workload.Op, error) {
	ex, ok := conn.(workload.Execer)
	if !ok {
		return nil, fmt.Errorf("session cannot run text statements")
	}
	r := rand.New(rand.NewPCG(uint64(session), 17))
	left := a.n
	return func(ctx context.Context) error {
		if left == 0 {
			return workload.ErrDone
		}
		left--
		return ex.ExecSQL(ctx, fmt.Sprintf("SELECT m.member_no, m.lastname, m.city FROM member m WHERE m.member_no = %d", 1+r.IntN(10000)))
	}, nil
}

func startServer(ctx context.Context, settings map[string]string) (*postgres.Instance, *postgres.Server, error) {
	pg, err := postgres.Start(ctx, postgres.InstanceOptions{Log: logf, Settings: settings})
	if err != nil {
		return nil, nil, err
	}
	dsn := pg.DSN("obsbench")
	if err := postgres.CreateDatabase(ctx, dsn); err != nil {
		pg.Stop()
		return nil, nil, err
	}
	s := postgres.New(dsn, postgres.Options{})
	ds, _ := dataset.Lookup("credit")
	if err := s.Load(ctx, ds); err != nil {
		pg.Stop()
		return nil, nil, err
	}
	return pg, s, nil
}

// makeLog runs the ad hoc sessions on a server that logs every statement,
// connect and disconnect (what pgreplay needs), and returns the csvlog
// concatenated into one file in dir.
func makeLog(ctx context.Context, c config, dir string) (string, int64, error) {
	pg, s, err := startServer(ctx, map[string]string{
		"logging_collector": "on", "log_destination": "csvlog", "log_statement": "all",
		"log_connections": "on", "log_disconnections": "on",
	})
	if err != nil {
		return "", 0, err
	}
	defer pg.Stop()
	dial := func(ctx context.Context) (driver.Session, error) { return s.Connect(ctx) }
	res, err := driver.Run(ctx, driver.Config{Clients: c.sessions, Duration: time.Hour}, dial, adHoc{n: c.statements})
	if err != nil {
		return "", 0, err
	}
	time.Sleep(time.Second) // the collector writes asynchronously
	files, _ := filepath.Glob(filepath.Join(pg.DataDir(), "log", "*.csv"))
	sort.Strings(files)
	path := filepath.Join(dir, "source.csv")
	out, err := os.Create(path)
	if err != nil {
		return "", 0, err
	}
	defer out.Close()
	for _, f := range files {
		in, err := os.Open(f)
		if err != nil {
			return "", 0, err
		}
		_, err = io.Copy(out, in)
		in.Close()
		if err != nil {
			return "", 0, err
		}
	}
	return path, res.Executed, nil
}

// sample is one tool's replay: wall time and the client's CPU.
type sample struct{ seconds, cpu float64 }

func run(ctx context.Context, c config) error {
	pgreplay, err := pgreplayBinary(ctx)
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "replay-vs-pgreplay-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	logPath, executed, err := makeLog(ctx, c, dir)
	if err != nil {
		return err
	}
	logf("captured %d statements of %d sessions", executed, c.sessions)

	// Each tool's own preparation, outside the timing: obsbench's capture
	// file loaded into memory, pgreplay's replay file (-f).
	capPath := filepath.Join(dir, "source.obsc")
	if err := captureFile(ctx, logPath, capPath); err != nil {
		return err
	}
	script, err := capture.LoadScript(capPath)
	if err != nil {
		return err
	}
	replayFile := filepath.Join(dir, "source.replay")
	if out, err := exec.CommandContext(ctx, pgreplay, "-f", "-c", "-o", replayFile, logPath).CombinedOutput(); err != nil {
		return fmt.Errorf("pgreplay -f: %w\n%s", err, out)
	}

	// The replays' server logs nothing.
	pg, s, err := startServer(ctx, nil)
	if err != nil {
		return err
	}
	defer pg.Stop()
	dial := func(ctx context.Context) (driver.Session, error) { return s.Connect(ctx) }
	tools := map[string]func() (sample, error){
		"obsbench": func() (sample, error) { return replayByObsbench(ctx, script, dial, executed) },
		"pgreplay": func() (sample, error) { return replayByPgreplay(ctx, pgreplay, pg, replayFile) },
	}
	names := []string{"obsbench", "pgreplay"}
	got := map[string][]sample{}
	rng := rand.New(rand.NewPCG(c.seed, 1))
	for round := 1; round <= c.rounds; round++ {
		order := append([]string(nil), names...)
		rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		for _, name := range order {
			smp, err := tools[name]()
			if err != nil {
				return err
			}
			got[name] = append(got[name], smp)
			logf("round %d %-8s %6.2f s  %8.0f statements/s  client CPU %.2f s", round, name, smp.seconds, float64(executed)/smp.seconds, smp.cpu)
		}
	}
	report := render(c, executed, got)
	fmt.Print(report)
	return os.WriteFile(c.out, []byte(report), 0o644)
}

// replayByObsbench replays script once with obsbench's driver, which
// must run every one of the executed statements captured, without error.
func replayByObsbench(ctx context.Context, script *capture.Script, dial driver.Dialer, executed int64) (sample, error) {
	wl := script.Meta(capture.ReplayOptions{Mode: capture.Stress, Passes: 1})
	var before, after syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &before)
	began := time.Now()
	res, err := driver.Run(ctx, driver.Config{Clients: wl.DefaultClients, Duration: time.Hour}, dial, wl.New())
	took := time.Since(began).Seconds()
	syscall.Getrusage(syscall.RUSAGE_SELF, &after)
	if err == nil && (res.Executed != executed || res.Errors > 0) {
		err = fmt.Errorf("obsbench replayed %d statements with %d errors; want %d", res.Executed, res.Errors, executed)
	}
	return sample{took, cpu(after) - cpu(before)}, err
}

// replayByPgreplay replays replayFile once with pgreplay against pg.
func replayByPgreplay(ctx context.Context, pgreplay string, pg *postgres.Instance, replayFile string) (sample, error) {
	cmd := exec.CommandContext(ctx, pgreplay, "-r", "-j", "-s", "100000", "-h", pg.SocketDir(), "-p", fmt.Sprint(pg.Port()), replayFile)
	// The managed server asks every connection for its password:
	// libpq reads it from the server's password file.
	cmd.Env = append(os.Environ(), "PGPASSFILE="+pg.PassFile())
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	began := time.Now()
	err := cmd.Run()
	took := time.Since(began).Seconds()
	if err != nil {
		return sample{}, fmt.Errorf("pgreplay -r: %w\n%s", err, out.String())
	}
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if os.Getenv("PGREPLAY_OUTPUT") != "" {
		logf("%s", out.String())
	}
	return sample{took, cpu(*ru)}, nil
}

func cpu(ru syscall.Rusage) float64 {
	return float64(ru.Utime.Sec+ru.Stime.Sec) + float64(ru.Utime.Usec+ru.Stime.Usec)/1e6
}

func captureFile(ctx context.Context, logPath, capPath string) error {
	in, err := os.Open(logPath)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(capPath)
	if err != nil {
		return err
	}
	defer out.Close()
	w := capture.NewWriter(out, capture.Header{Engine: "postgres", Source: "csvlog"})
	p, err := capture.NewParser("csvlog", capture.Filter{Applications: []string{postgres.DriverApplication}}, w)
	if err != nil {
		return err
	}
	if err := p.Parse(ctx, in, logPath); err != nil {
		return err
	}
	return w.Close()
}

func render(c config, executed int64, got map[string][]sample) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# obsbench's replay vs pgreplay\n\n")
	fmt.Fprintf(&b, "- command: `go run ./bench/replay-vs-pgreplay %s`\n", strings.Join(os.Args[1:], " "))
	fmt.Fprintf(&b, "- date: %s\n", time.Now().UTC().Format("2006-01-02 15:04:05 UTC"))
	fmt.Fprintf(&b, "- machine: %s\n", sidebyside.Machine())
	fmt.Fprintf(&b, "- seed %d; %d sessions x %d ad hoc point lookups = %d statements, replayed once per run (stress: as fast as the server answers)\n\n",
		c.seed, c.sessions, c.statements, executed)
	fmt.Fprintln(&b, "| tool | runs | median s | median statements/s | median client CPU s | client CPU µs/statement |")
	fmt.Fprintln(&b, "|---|---|---|---|---|---|")
	med := map[string]sample{}
	for _, name := range []string{"obsbench", "pgreplay"} {
		var secs, cpus []float64
		for _, s := range got[name] {
			secs, cpus = append(secs, s.seconds), append(cpus, s.cpu)
		}
		m := sample{stats.Median(secs), stats.Median(cpus)}
		med[name] = m
		fmt.Fprintf(&b, "| %s | %d | %.2f | %.0f | %.2f | %.1f |\n", name, len(secs), m.seconds, float64(executed)/m.seconds, m.cpu, 1e6*m.cpu/float64(executed))
	}
	fmt.Fprintf(&b, "\nobsbench statements/s ÷ pgreplay statements/s: **%.2f** (above 1: obsbench replays faster)  \n", med["pgreplay"].seconds/med["obsbench"].seconds)
	fmt.Fprintf(&b, "obsbench client CPU ÷ pgreplay client CPU: **%.2f**\n", med["obsbench"].cpu/med["pgreplay"].cpu)
	return b.String()
}
