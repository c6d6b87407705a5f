package workloadspec

import (
	"io/fs"
	"os"
)

// ReadFile reads a file a workload runs from (a script, a capture): from
// this machine in obsbench run, from the copies its coordinator sent in
// a worker, which need not see the coordinator's file system.
type ReadFile func(path string) ([]byte, error)

// Recorder reads from this machine and keeps what it read, by the path
// it was asked for: the files a coordinator sends its workers.
type Recorder map[string][]byte

// Read reads path and keeps what it read.
func (r Recorder) Read(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err == nil {
		r[path] = b
	}
	return b, err
}

// Sent reads the files a coordinator sent; any other path does not
// exist, as a built-in script's name does not exist as a file.
func Sent(files map[string][]byte) ReadFile {
	return func(path string) ([]byte, error) {
		b, ok := files[path]
		if !ok {
			return nil, &fs.PathError{Op: "open", Path: path, Err: fs.ErrNotExist}
		}
		return b, nil
	}
}
