package poll

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestUntil(t *testing.T) {
	errLate, errDone := errors.New("late"), errors.New("broken")
	late := func() error { return errLate }
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name  string
		ctx   context.Context
		after int // done reports true on this call (0: never)
		err   error
		want  error
		calls int
	}{
		{"at once", context.Background(), 1, nil, nil, 1},
		{"on the third call", context.Background(), 3, nil, nil, 3},
		{"an error ends it", context.Background(), 0, errDone, errDone, 1},
		{"too late", context.Background(), 0, nil, errLate, -1},
		{"canceled", canceled, 0, nil, context.Canceled, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			calls := 0
			err := Until(tt.ctx, 30*time.Millisecond, time.Millisecond, func() (bool, error) {
				calls++
				return calls == tt.after, tt.err
			}, late)
			if !errors.Is(err, tt.want) {
				t.Errorf("Until = %v; want %v", err, tt.want)
			}
			if tt.calls >= 0 && calls != tt.calls {
				t.Errorf("done called %d times; want %d", calls, tt.calls)
			}
			if tt.calls < 0 && calls < 2 {
				t.Errorf("done called %d times before giving up; want it called again until the timeout", calls)
			}
		})
	}
}

// Sleep waits out its time, ends with its context, and does not wait
// for a time already past.
func TestSleep(t *testing.T) {
	if err := Sleep(context.Background(), 5*time.Millisecond); err != nil {
		t.Errorf("Sleep(5ms) = %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := Sleep(ctx, time.Hour); !errors.Is(err, context.Canceled) {
		t.Errorf("Sleep(1h) in a cancelled context = %v; want context.Canceled", err)
	}
	if err := Sleep(ctx, -time.Second); err != nil {
		t.Errorf("Sleep(-1s) = %v; want nil, without waiting", err)
	}
}
