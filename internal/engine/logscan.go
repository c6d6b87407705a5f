// Counting an observer's records in the log files a server writes: the
// lines added since a run started that carry the workload's tag, once
// the server has finished writing them.

package engine

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"regexp"
	"time"

	"github.com/obsbench/obsbench/internal/poll"
)

// CountLogMatches counts the lines of path from offset on that contain tag
// and match re. The cheap byte search comes first: most lines of a busy
// log are other statements' or a plan's.
func CountLogMatches(path string, offset int64, tag []byte, re *regexp.Regexp) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return 0, err
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	var n int64
	for sc.Scan() {
		line := sc.Bytes()
		if bytes.Contains(line, tag) && re.Match(line) {
			n++
		}
	}
	return n, sc.Err()
}

// WaitLogStable waits until the total size of the files, as total reports
// it, has not changed for 300 ms (at most 30 s): each record was handed to
// the server's writer before its statement completed, so once the writer
// is idle the files hold them all. It serves any count that settles after
// a run, such as an event counter a server updates as sessions end.
func WaitLogStable(ctx context.Context, total func() (int64, error)) error {
	var last int64 = -1
	stable := 0
	return poll.Until(ctx, 30*time.Second, 100*time.Millisecond, func() (bool, error) {
		sum, err := total()
		if err != nil {
			return false, err
		}
		if sum == last {
			stable++
		} else {
			stable, last = 0, sum
		}
		return stable >= 3, nil
	}, func() error {
		return errors.New("the count (log size or event counter) kept changing for 30s after the run")
	})
}

// LogFinder looks for a marker in files that grow: each call reads only what
// was added since the last, keeping enough of the end to find a marker
// cut in two by a write.
type LogFinder struct {
	Marker []byte
	seen   map[string]int64 // path -> bytes searched
	buf    []byte           // a block and the end of the one before
}

// Find reports whether the marker stands in path beyond offset (where
// the search of a file not searched before begins). A file that is gone
// holds no marker.
func (f *LogFinder) Find(path string, offset int64) (bool, error) {
	if f.seen == nil {
		f.seen = map[string]int64{}
	}
	from, ok := f.seen[path]
	if !ok {
		from = offset
	}
	file, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	defer file.Close()
	if _, err := file.Seek(from, io.SeekStart); err != nil {
		return false, err
	}
	// A run's log can be large: it is read a block at a time, each
	// searched with the end of the one before.
	keep := len(f.Marker) - 1
	if f.buf == nil {
		f.buf = make([]byte, keep+1<<20)
	}
	buf, have := f.buf, 0
	for {
		n, err := file.Read(buf[have:])
		have += n
		if bytes.Contains(buf[:have], f.Marker) {
			return true, nil
		}
		if tail := min(keep, have); n > 0 {
			from += int64(have - tail)
			have = copy(buf, buf[have-tail:have])
		}
		if err == io.EOF {
			f.seen[path] = from
			return false, nil
		}
		if err != nil {
			return false, err
		}
	}
}
