package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/obsbench/obsbench/internal/fleet/kube"
	"github.com/obsbench/obsbench/internal/fleet/kube/kubetest"
)

// kubelet plays the part of a cluster for the objects obsbench creates in
// an API server in memory (kubetest): once the Job exists, it runs the Job's pod
// template as local processes, one per index, as a kubelet would: the
// container's args, its environment from the Secret the template names,
// JOB_COMPLETION_INDEX, and the Service's name resolved to its
// EndpointSlice's address as cluster DNS would. What it proves is the
// wiring of the objects (names, keys, args) with the worker command; a
// real cluster is not run here.
type kubelet struct {
	t      *testing.T
	client *kube.API
	ns     string
	mu     sync.Mutex
	procs  []*exec.Cmd
	out    lockedBuffer
}

// lockedBuffer collects the output of several processes.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func (k *kubelet) run(ctx context.Context) {
	for ; ctx.Err() == nil; time.Sleep(20 * time.Millisecond) {
		var jobs batchv1.JobList
		if err := k.client.List(ctx, k.path("Job"), "", &jobs); err != nil || len(jobs.Items) == 0 {
			continue
		}
		job := jobs.Items[0]
		pod := job.Spec.Template.Spec.Containers[0]
		var slices discoveryv1.EndpointSliceList
		var services corev1.ServiceList
		k.client.List(ctx, k.path("EndpointSlice"), "", &slices)
		k.client.List(ctx, k.path("Service"), "", &services)
		if len(slices.Items) != 1 || len(services.Items) != 1 {
			k.t.Errorf("%d endpoint slices, %d services; want 1 each", len(slices.Items), len(services.Items))
			return
		}
		host := services.Items[0].Name + "." + k.ns + ".svc"
		addr := slices.Items[0].Endpoints[0].Addresses[0]
		var args []string
		for _, a := range pod.Args {
			args = append(args, strings.Replace(a, host, addr, 1))
		}
		env := []string{"OBSBENCH_TEST_MAIN=1"}
		for _, e := range pod.Env {
			ref := e.ValueFrom.SecretKeyRef
			var sec corev1.Secret
			if err := k.client.Get(ctx, k.path("Secret")+"/"+ref.Name, &sec); err != nil {
				k.t.Errorf("env %s from Secret %s: %v", e.Name, ref.Name, err)
				return
			}
			env = append(env, e.Name+"="+string(sec.Data[ref.Key]))
		}
		for i := range int(*job.Spec.Completions) {
			cmd := exec.Command(os.Args[0], args...)
			cmd.Env = append(append(os.Environ(), env...), fmt.Sprintf("JOB_COMPLETION_INDEX=%d", i))
			cmd.Stdout, cmd.Stderr = &k.out, &k.out
			if err := cmd.Start(); err != nil {
				k.t.Error(err)
				return
			}
			k.mu.Lock()
			k.procs = append(k.procs, cmd)
			k.mu.Unlock()
		}
		return
	}
}

// path is the path of kind's objects in the kubelet's namespace.
func (k *kubelet) path(kind string) string { return must(kube.Collection(kind, k.ns)) }

func (k *kubelet) stop() {
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, p := range k.procs {
		p.Process.Kill()
		p.Wait()
	}
}

// obsbench run --launcher kubernetes against an API server in memory,
// with the pods played by local processes (kubelet above): the workers
// register by the Service's name, take their index from
// JOB_COMPLETION_INDEX and their token from the Secret; the experiment
// runs on them; at the end every object is deleted, the journal of the
// objects is gone, the workers have exited and the server's settings are
// as before.
func TestKubernetesLauncher(t *testing.T) {
	needServers(t)
	dsn, settings := externalServer(t)
	before := settings()
	state := privateTemp(t)
	t.Setenv("OBSBENCH_STATE_DIR", state)
	srv := kubetest.Start(t)
	client, err := kube.NewAPIAt(srv.URL, srv.Client())
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()

	ctx, cancel := context.WithCancel(context.Background())
	k := &kubelet{t: t, client: client, ns: "perf"}
	go k.run(ctx)
	defer func() { cancel(); k.stop() }()
	out := filepath.Join(privateTemp(t), "out")
	var stdout, stderr bytes.Buffer
	e := testEnv(&stdout, &stderr)
	e.KubeClient = func(string) (*kube.API, string, error) { return client, "perf", nil }
	code := e.run(context.Background(), []string{"run", "--dsn", dsn, "--allow-changes", "--observers", "log-statements-file",
		"--workers", "2", "--launcher", "kubernetes", "--image", "registry.test/obsbench:1", "--advertise", "127.0.0.1",
		"--coordinator-port", fmt.Sprint(port), "--method", "rounds", "--rounds", "2", "--duration", "1s", "--warmup", "500ms",
		"--clients", "2", "--seed", "9", "--out", out})
	if code != exitOK {
		t.Fatalf("exit %d\n%s\nworkers:\n%s", code, stderr.String(), k.out.String())
	}
	if !strings.Contains(stderr.String(), "creating Job perf/obsbench-e") {
		t.Errorf("no Job creation noted:\n%s", stderr.String())
	}
	runs := readRuns(t, out)
	for _, r := range runs {
		if r.Error != "" || len(r.Driver.Workers) != 2 {
			t.Errorf("run %d (%s): error %q, %d workers; want 2", r.Seq, r.Condition, r.Error, len(r.Driver.Workers))
		}
		if r.Condition == "log-statements-file" && (r.Events == nil || r.Events.Recorded != r.Events.Executed) {
			t.Errorf("run %d: events %+v; want every statement of both pods recorded", r.Seq, r.Events)
		}
	}
	for _, kind := range []string{"Job", "Service", "Secret", "EndpointSlice"} {
		if n := srv.Count(k.path(kind)); n != 0 {
			t.Errorf("%d %s objects left after the experiment", n, kind)
		}
	}
	if left, _ := filepath.Glob(filepath.Join(state, "kubernetes", "journal-*")); len(left) != 0 {
		t.Errorf("journal of the objects left: %v", left)
	}
	k.mu.Lock()
	for _, p := range k.procs {
		if p.ProcessState == nil {
			if err := waitExit(p, 5*time.Second); err != nil {
				t.Errorf("worker pod process %d: %v", p.Process.Pid, err)
			}
		}
	}
	k.mu.Unlock()
	if d := diffSettings(before, settings()); len(d) > 0 {
		t.Errorf("settings changed after the experiment: %v", d)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// waitExit waits for cmd to exit, at most d.
func waitExit(cmd *exec.Cmd, d time.Duration) error {
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return err
	case <-time.After(d):
		return fmt.Errorf("still running %v after the experiment", d)
	}
}
