package kube

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/obsbench/obsbench/internal/fleet"
	"github.com/obsbench/obsbench/internal/spec"
)

// DefaultPort is where a coordinator listens for worker pods unless
// --coordinator-port says otherwise.
const DefaultPort = 7400

// RegisterTimeout bounds the wait for worker pods to register: their
// image may have to be pulled first.
const RegisterTimeout = 5 * time.Minute

// Pods is a coordinator whose workers are an Indexed Job's pods.
type Pods struct {
	*fleet.Coordinator
	launch *Launcher
}

// Close ends the workers and deletes every object the launch created.
func (p *Pods) Close() error {
	err := p.Coordinator.Close()
	return errors.Join(err, p.launch.Delete(context.Background()))
}

// Start is what --launcher kubernetes starts: Workers pods of the
// experiment named Experiment.
type Start struct {
	spec.Kubernetes
	spec.Coordinator
	Workers    int
	Experiment string
	// StateDir holds the launcher's journals (Dir).
	StateDir string
	// Getenv reads the environment obsbench runs in: in a pod, the
	// downward API's POD_IP, POD_NAME, POD_NAMESPACE and POD_UID.
	Getenv func(string) string
	// Client reaches the Kubernetes API server; nil is Client (tests
	// give an API server of their own, kubetest).
	Client func(kubeconfig string) (*API, string, error)
}

// StartPods listens for workers on the coordinator's port, creates the
// Job of worker pods (first deleting what a crashed obsbench left) and
// waits until every pod has registered.
func StartPods(ctx context.Context, s Start, cfg fleet.Config, logf func(string, ...any)) (*Pods, error) {
	newClient, getenv := s.Client, s.Getenv
	if newClient == nil {
		newClient = Client
	}
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	client, ns, err := newClient(s.Kubeconfig)
	if err != nil {
		return nil, err
	}
	if s.Namespace != "" {
		ns = s.Namespace
	}
	if n, err := Cleanup(ctx, client, Dir(s.StateDir)); err != nil {
		return nil, fmt.Errorf("delete what an earlier obsbench left in the cluster: %w", err)
	} else if n > 0 {
		logf("deleted %d object(s) an obsbench that did not finish left in the cluster", n)
	}
	advertise, port := s.Advertise, s.Port
	if port == 0 {
		port = DefaultPort
	}
	if advertise == "" {
		advertise = getenv("POD_IP")
	}
	if advertise == "" {
		return nil, spec.Invalidf("--launcher kubernetes: give --advertise, the address the worker pods reach this obsbench at (in a pod, set POD_IP from status.podIP)")
	}
	if cfg.Token, err = fleet.NewToken(); err != nil {
		return nil, err
	}
	o := Options{Experiment: s.Experiment, Namespace: ns, Image: s.Image, Workers: s.Workers,
		Port: int32(port), AdvertiseIP: advertise, CPU: s.CPU, Memory: s.Memory, Spread: true}
	if name := getenv("POD_NAME"); name != "" {
		o.Owner = &Owner{Name: name, Namespace: getenv("POD_NAMESPACE"), UID: types.UID(getenv("POD_UID"))}
	}
	// The advertised address only, over TLS; and there only a worker
	// with the token (from the Secret) is served.
	ln, pin, err := fleet.ListenTLS(net.JoinHostPort(advertise, strconv.Itoa(port)))
	if err != nil {
		return nil, fmt.Errorf("listen for workers: %w", err)
	}
	objs, err := Build(o, fleet.Credential(cfg.Token, pin))
	if err != nil {
		ln.Close()
		return nil, spec.Invalidf("--launcher kubernetes: %v", err)
	}
	coord := fleet.NewCoordinator(ln, cfg)
	logf("creating Job %s/%s of %d worker pods (%s)", ns, objs.Job.Name, s.Workers, s.Image)
	launch, err := Launch(ctx, client, objs, Dir(s.StateDir))
	if err != nil {
		coord.Close()
		return nil, err
	}
	p := &Pods{Coordinator: coord, launch: launch}
	if err := coord.Wait(ctx, RegisterTimeout); err != nil {
		p.Close()
		return nil, fmt.Errorf("%w (kubectl -n %s describe job %s; kubectl -n %s logs -l %s=%s)", err, ns, objs.Job.Name, ns, LabelExperiment, o.Experiment)
	}
	return p, nil
}
