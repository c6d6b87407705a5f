package mariadb

import (
	"context"

	"github.com/obsbench/obsbench/internal/observer"
	"github.com/obsbench/obsbench/internal/slowfs"
)

// withSinkDir returns o's settings with the sink directory filled in.
func (s *Server) withSinkDir(o observer.Observer) observer.Observer {
	if s.host == nil {
		return o
	}
	return o.WithSinkDir(s.host.SinkDir())
}

// openSink mounts o's slow directory before its settings point the server
// at it, and records in a how to take it down. Check has refused every
// other kind of sink.
func (a *Applied) openSink(ctx context.Context, o observer.Observer) error {
	if o.Sink == nil {
		return nil
	}
	dev, err := o.Sink.SlowDir()
	if err != nil {
		return err
	}
	release, err := a.s.host.MountSlowDir(ctx, slowfs.Device(dev))
	if err != nil {
		return err
	}
	a.sink.Set(release)
	return nil
}
