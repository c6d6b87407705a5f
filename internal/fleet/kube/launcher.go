package kube

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/obsbench/obsbench/internal/journal"
)

// Dir is where the launcher's journals live: beside the server journals
// of stateDir, in a folder of their own (obsbench restore undoes server
// changes; the launcher cleans up its own objects at its next start).
func Dir(stateDir string) string { return filepath.Join(stateDir, "kubernetes") }

// ref names one object created, as journaled before its creation.
type ref struct {
	Kind      string `json:"kind"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
}

// Launcher holds the objects of one launch until Delete.
type Launcher struct {
	client  *API
	journal *journal.Journal
	created []ref
	seqs    []int
}

// Client connects to the API server: from inside a pod with its service
// account, else with kubeconfig ("" for $KUBECONFIG or ~/.kube/config).
// namespace is the pod's own, or the kubeconfig context's.
func Client(kubeconfig string) (client *API, namespace string, err error) {
	cfg, err := rest.InClusterConfig()
	if err == nil && kubeconfig == "" {
		ns, rerr := os.ReadFile("/var/run/secrets/kubernetes.io/serviceaccount/namespace")
		if rerr != nil {
			return nil, "", fmt.Errorf("in-cluster namespace: %w", rerr)
		}
		c, err := NewAPI(cfg)
		return c, string(ns), err
	}
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = kubeconfig
	cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{})
	if cfg, err = cc.ClientConfig(); err != nil {
		return nil, "", fmt.Errorf("kubeconfig: %w (outside a cluster, give --kubeconfig or set KUBECONFIG)", err)
	}
	if namespace, _, err = cc.Namespace(); err != nil {
		return nil, "", fmt.Errorf("kubeconfig namespace: %w", err)
	}
	c, err := NewAPI(cfg)
	return c, namespace, err
}

// Launch creates objs, journaling each in dir before creating it. On a
// failure it deletes what it created and returns the error.
func Launch(ctx context.Context, client *API, objs Objects, dir string) (*Launcher, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	j, err := journal.Create(dir, "kubernetes:"+objs.Job.Namespace)
	if err != nil {
		return nil, err
	}
	l := &Launcher{client: client, journal: j}
	steps := []struct {
		r   ref
		obj any
	}{
		{ref{"Secret", objs.Secret.Namespace, objs.Secret.Name}, objs.Secret},
		{ref{"Service", objs.Service.Namespace, objs.Service.Name}, objs.Service},
		{ref{"EndpointSlice", objs.EndpointSlice.Namespace, objs.EndpointSlice.Name}, objs.EndpointSlice},
		{ref{"Job", objs.Job.Namespace, objs.Job.Name}, objs.Job},
	}
	for _, s := range steps {
		seq, err := j.Record(s.r)
		if err != nil {
			return nil, errors.Join(err, l.Delete(context.WithoutCancel(ctx)))
		}
		l.created, l.seqs = append(l.created, s.r), append(l.seqs, seq)
		if err := create(ctx, client, s.r, s.obj); err != nil {
			return nil, errors.Join(fmt.Errorf("create %s %s/%s: %w", s.r.Kind, s.r.Namespace, s.r.Name, err), l.Delete(context.WithoutCancel(ctx)))
		}
	}
	return l, nil
}

// Delete removes every object created, the Job's pods with it, newest
// first; an object already gone is fine.
func (l *Launcher) Delete(ctx context.Context) error {
	var errs []error
	for i := len(l.created) - 1; i >= 0; i-- {
		if err := deleteRef(ctx, l.client, l.created[i]); err != nil {
			errs = append(errs, err)
			continue
		}
		if err := l.journal.Undone(l.seqs[i]); err != nil {
			errs = append(errs, err)
		}
	}
	l.created, l.seqs = nil, nil
	return errors.Join(append(errs, l.journal.Close())...)
}

func create(ctx context.Context, client *API, r ref, obj any) error {
	c, err := Collection(r.Kind, r.Namespace)
	if err != nil {
		return err
	}
	return client.Create(ctx, c, obj)
}

func deleteRef(ctx context.Context, client *API, r ref) error {
	path, err := Object(r.Kind, r.Namespace, r.Name)
	if err != nil {
		return fmt.Errorf("journal names a %s, which obsbench never creates", r.Kind)
	}
	if err := client.Delete(ctx, path, nil); err != nil && !IsNotFound(err) {
		return fmt.Errorf("delete %s %s/%s: %w", r.Kind, r.Namespace, r.Name, err)
	}
	return nil
}

// Cleanup deletes the objects that journals in dir name and that an
// obsbench no longer running left behind (a crash), and returns how many.
func Cleanup(ctx context.Context, client *API, dir string) (int, error) {
	paths, err := journal.List(dir)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return 0, nil
		}
		return 0, err
	}
	n := 0
	for _, path := range paths {
		header, pending, err := journal.Read(path)
		if err != nil {
			return n, err
		}
		if journal.WriterAlive(header) {
			continue
		}
		var seqs []int
		for _, p := range pending {
			var r ref
			if err := json.Unmarshal(p.Change, &r); err != nil {
				return n, fmt.Errorf("%s: %w", path, err)
			}
			if err := deleteRef(ctx, client, r); err != nil {
				return n, fmt.Errorf("%s: %w", path, err)
			}
			seqs = append(seqs, p.Seq)
			n++
		}
		if err := journal.MarkUndone(path, seqs); err != nil {
			return n, err
		}
	}
	return n, nil
}
