package app

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/obsbench/obsbench/internal/fleet"
	"github.com/obsbench/obsbench/internal/fleet/kube"
)

// PodRegisterTimeout bounds the wait for worker pods to register: their
// image may have to be pulled first.
var PodRegisterTimeout = 5 * time.Minute

// KubeClient reaches the Kubernetes API server (kube.Client); tests of
// the launcher replace it with client-go's fake.
var KubeClient = kube.Client

// pods is a coordinator whose workers are an Indexed Job's pods.
type pods struct {
	*fleet.Coordinator
	launch *kube.Launcher
}

// Close ends the workers and deletes every object the launch created.
func (p *pods) Close() error {
	err := p.Coordinator.Close()
	return errors.Join(err, p.launch.Delete(context.Background()))
}

// startPods listens for workers on --coordinator-port, creates the Job of
// worker pods (first deleting what a crashed obsbench left) and waits
// until every pod has registered.
func startPods(ctx context.Context, c Experiment, cfg fleet.Config, logf func(string, ...any)) (workerPool, error) {
	k := c.Kubernetes
	client, ns, err := KubeClient(k.Kubeconfig)
	if err != nil {
		return nil, err
	}
	if k.Namespace != "" {
		ns = k.Namespace
	}
	if n, err := kube.Cleanup(ctx, client, kube.Dir()); err != nil {
		return nil, fmt.Errorf("delete what an earlier obsbench left in the cluster: %w", err)
	} else if n > 0 {
		logf("deleted %d object(s) an obsbench that did not finish left in the cluster", n)
	}
	advertise, port := c.Coordinator.Advertise, c.Coordinator.Port
	if port == 0 {
		port = defaultKubernetesPort
	}
	if advertise == "" {
		advertise = os.Getenv("POD_IP")
	}
	if advertise == "" {
		return nil, usagef("--launcher kubernetes: give --advertise, the address the worker pods reach this obsbench at (in a pod, set POD_IP from status.podIP)")
	}
	if cfg.Token, err = fleet.NewToken(); err != nil {
		return nil, err
	}
	o := kube.Options{Experiment: "e" + strconv.FormatUint(c.Seed%(1<<40), 36), Namespace: ns, Image: k.Image, Workers: c.Workers,
		Port: int32(port), AdvertiseIP: advertise, CPU: k.CPU, Memory: k.Memory, Spread: true}
	if name := os.Getenv("POD_NAME"); name != "" {
		o.Owner = &kube.Owner{Name: name, Namespace: os.Getenv("POD_NAMESPACE"), UID: types.UID(os.Getenv("POD_UID"))}
	}
	// The advertised address only, over TLS; and there only a worker
	// with the token (from the Secret) is served.
	ln, pin, err := fleet.ListenTLS(net.JoinHostPort(advertise, strconv.Itoa(port)))
	if err != nil {
		return nil, fmt.Errorf("listen for workers: %w", err)
	}
	objs, err := kube.Build(o, fleet.Credential(cfg.Token, pin))
	if err != nil {
		ln.Close()
		return nil, usagef("--launcher kubernetes: %v", err)
	}
	coord := fleet.NewCoordinator(ln, cfg)
	logf("creating Job %s/%s of %d worker pods (%s)", ns, objs.Job.Name, c.Workers, k.Image)
	launch, err := kube.Launch(ctx, client, objs, kube.Dir())
	if err != nil {
		coord.Close()
		return nil, err
	}
	p := &pods{Coordinator: coord, launch: launch}
	if err := coord.Wait(ctx, PodRegisterTimeout); err != nil {
		p.Close()
		return nil, fmt.Errorf("%w (kubectl -n %s describe job %s; kubectl -n %s logs -l %s=%s)", err, ns, objs.Job.Name, ns, kube.LabelExperiment, o.Experiment)
	}
	return p, nil
}
