// Package process is what obsbench takes from the process it runs in:
// cmd/obsbench reads it once and passes it down, so that nothing below
// reads the environment's variables or a package variable a test has
// changed. Each part is given only the fields it needs.
package process

import (
	"cmp"
	"os"
	"time"

	"github.com/obsbench/obsbench/internal/cgroup"
	"github.com/obsbench/obsbench/internal/fleet/kube"
)

// Env is the process's environment as the experiment runner needs it.
// Its zero value reads no variables and uses the machine as it is.
type Env struct {
	// Version is obsbench's, as the command was built: summaries record it.
	Version string
	// StateDir holds the journals (journal.Dir).
	StateDir string
	// Getenv reads the environment's variables, for those a managed
	// server's start and a worker pod read (nil reads none).
	Getenv func(string) string
	// What tests replace of the machine, the zero value being the real
	// one: where cgroup hierarchies are mounted (cgroup.Root), the
	// command of a local worker (this executable's worker command), the
	// wait for workers to register (a minute) and the client of
	// --launcher kubernetes' cluster (kube.Client).
	CgroupRoot      string
	WorkerCommand   []string
	RegisterTimeout time.Duration
	KubeClient      func(kubeconfig string) (*kube.API, string, error)
}

// Cgroups is where cgroup hierarchies are mounted.
func (e Env) Cgroups() string { return cmp.Or(e.CgroupRoot, cgroup.Root) }

// Worker is the command line that starts a local worker.
func (e Env) Worker() ([]string, error) {
	if e.WorkerCommand != nil {
		return e.WorkerCommand, nil
	}
	exe, err := os.Executable()
	return []string{exe, "worker"}, err
}

// Register bounds the wait for workers to register.
func (e Env) Register() time.Duration { return cmp.Or(e.RegisterTimeout, time.Minute) }
