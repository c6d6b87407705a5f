package postgres

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/obsbench/obsbench/internal/engine"
	"github.com/obsbench/obsbench/internal/observer"
	"github.com/obsbench/obsbench/internal/slowfs"
)

// Host is the machine a managed server runs on, as far as observers' sinks
// need it: the server's stderr stream, which obsbench reads, and a
// directory on a slow I/O path.
type Host interface {
	// SetStream sets how fast obsbench reads the server's stderr (bytes
	// per second, 0: as fast as it can) and whether the server drops
	// messages rather than wait when the stream is full.
	SetStream(rate int64, lossy bool) error
	// StreamLog is the file obsbench appends the stream to.
	StreamLog() string
	// SinkDir is where MountSlowDir mounts the slow directory.
	SinkDir() string
	// MountSlowDir makes SinkDir a slow device as dev says. release
	// unmounts it once the server no longer writes there.
	MountSlowDir(ctx context.Context, dev slowfs.Device) (release func() error, err error)
	// StartConsumer creates a logical replication slot and starts a
	// reader on it; stop ends the reader and drops the slot.
	StartConsumer(ctx context.Context, spec ConsumerSpec) (stop func() error, err error)
}

// withSinkDir returns o's settings with the sink directory filled in.
func (s *Server) withSinkDir(o observer.Observer) observer.Observer {
	if s.host == nil {
		return o
	}
	return o.WithSinkDir(s.host.SinkDir())
}

// openSink sets up o's sink before its settings are applied, and records in
// a how to take it down.
func (a *Applied) openSink(ctx context.Context, o observer.Observer) error {
	if o.Sink == nil {
		return nil
	}
	h := a.s.host
	if h == nil {
		return &engine.SinkError{Observer: o.Name, Sink: *o.Sink}
	}
	switch o.Sink.Kind {
	case observer.SinkStream:
		rate, err := o.Sink.RateBytes()
		if err != nil {
			return err
		}
		a.sink.Set(func() error { return h.SetStream(0, false) })
		return h.SetStream(rate, o.Sink.Lossy)
	case observer.SinkSlowDir:
		dev, err := o.Sink.SlowDir()
		if err != nil {
			return err
		}
		release, err := h.MountSlowDir(ctx, slowfs.Device(dev))
		if err != nil {
			return err
		}
		a.sink.Set(release)
		return nil
	}
	return fmt.Errorf("observer %s: unknown sink kind %q", o.Name, o.Sink.Kind)
}

// startConsumer starts o's consumer once its settings are in force (a
// logical slot needs wal_level=logical), and records in a how to stop it.
func (a *Applied) startConsumer(ctx context.Context, o observer.Observer) error {
	if o.Consumer == nil {
		return nil
	}
	h := a.s.host
	if h == nil {
		return fmt.Errorf("observer %s reads with a consumer (%s), which obsbench runs only beside a server it manages", o.Name, o.Consumer)
	}
	rate, err := o.Consumer.RateBytes()
	if err != nil {
		return err
	}
	cfg, err := pgx.ParseConfig(a.s.dsn)
	if err != nil {
		return err
	}
	stop, err := h.StartConsumer(ctx, ConsumerSpec{DB: cfg.Database, Slot: "obsbench_" + strings.ReplaceAll(o.Name, "-", "_"), Plugin: o.Consumer.Plugin, Rate: rate})
	if err != nil {
		return err
	}
	a.consumer.Set(stop)
	return nil
}
