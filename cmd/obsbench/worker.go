package main

import (
	"context"
	"io"
	"strconv"

	"github.com/obsbench/obsbench/internal/app"
	"github.com/obsbench/obsbench/internal/fleet"
)

// workerCmd is 'obsbench worker': it runs sessions for the coordinator
// that started it (obsbench run --workers N) until the coordinator ends;
// getenv reads its environment, where the coordinator gives the token.
func workerCmd(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	fs := commandFlags("worker")
	fs.SetOutput(stderr)
	coordinator := fs.String("coordinator", "", "the coordinator's address: unix:/path/to/socket or host:port")
	index := fs.Int("index", -1, "this worker's number, from 0 (default: $JOB_COMPLETION_INDEX, as a Kubernetes Indexed Job sets it)")
	if err := parseFlags(fs, args, stdout); err != nil {
		return err
	}
	if *coordinator == "" {
		return usagef("worker: give --coordinator ADDRESS (obsbench run --workers starts its workers with it)")
	}
	if *index < 0 {
		// "the control plane automatically sets the downward API to
		// expose the index in the JOB_COMPLETION_INDEX environment
		// variable" (kubernetes.io/docs/tasks/job/indexed-parallel-processing-static).
		n, err := strconv.Atoi(getenv("JOB_COMPLETION_INDEX"))
		if err != nil || n < 0 {
			return usagef("worker: give --index N (from 0), or set JOB_COMPLETION_INDEX")
		}
		*index = n
	}
	token := getenv(fleet.TokenEnv)
	if token == "" {
		return usagef("worker: %s is not set: the coordinator's token is given in the environment", fleet.TokenEnv)
	}
	return app.Worker(ctx, *coordinator, *index, token, stderr)
}
