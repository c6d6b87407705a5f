package experiment

import (
	"sync"
	"time"

	"github.com/obsbench/obsbench/internal/engine"
	"github.com/obsbench/obsbench/internal/observer"
)

// streamSampler records, every second of the measured window, how many
// bytes the live stream's reader received: a reader that stops receiving
// while statements go on shows as a run of zeros (study 2's lagging
// reader the server cut off).
type streamSampler struct {
	src  engine.Streamed
	mu   sync.Mutex
	last int64
	per  []int64
	stop chan struct{}
	done chan struct{}
}

// newStreamSampler returns nil unless o sends its events to t's stream.
func newStreamSampler(t engine.Target, o observer.Observer) *streamSampler {
	src, ok := t.(engine.Streamed)
	if !ok || o.Sink == nil || o.Sink.Kind != observer.SinkStream {
		return nil
	}
	return &streamSampler{src: src}
}

// toggle starts sampling when the window opens and stops when it closes.
func (s *streamSampler) toggle(open bool) {
	if s == nil {
		return
	}
	if !open {
		s.close()
		return
	}
	s.last = s.src.StreamBytes()
	s.stop, s.done = make(chan struct{}), make(chan struct{})
	go func() {
		defer close(s.done)
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-s.stop:
				return
			case <-t.C:
				n := s.src.StreamBytes()
				s.mu.Lock()
				s.per = append(s.per, n-s.last)
				s.last = n
				s.mu.Unlock()
			}
		}
	}()
}

// close stops sampling; safe to call again.
func (s *streamSampler) close() {
	if s == nil || s.stop == nil {
		return
	}
	close(s.stop)
	<-s.done
	s.stop = nil
}

// perSecond is the bytes received in each whole second of the window.
func (s *streamSampler) perSecond() []int64 {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]int64(nil), s.per...)
}
