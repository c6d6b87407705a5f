package app

import (
	"io/fs"
	"os"
)

// readFile reads a file a workload runs from (a script, a capture): from
// this machine in obsbench run, from the copies its coordinator sent in
// a worker, which need not see the coordinator's file system.
type readFile func(path string) ([]byte, error)

// fileRecorder reads from this machine and keeps what it read, by the
// path it was asked for: the files a coordinator sends its workers.
type fileRecorder map[string][]byte

func (r fileRecorder) read(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err == nil {
		r[path] = b
	}
	return b, err
}

// sentFiles reads the files a coordinator sent; any other path does not
// exist, as a built-in script's name does not exist as a file.
func sentFiles(files map[string][]byte) readFile {
	return func(path string) ([]byte, error) {
		b, ok := files[path]
		if !ok {
			return nil, &fs.PathError{Op: "open", Path: path, Err: fs.ErrNotExist}
		}
		return b, nil
	}
}
