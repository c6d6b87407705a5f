package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/yaml"

	"github.com/obsbench/obsbench/internal/engine/postgres"
	"github.com/obsbench/obsbench/internal/engine/servertest"
	"github.com/obsbench/obsbench/internal/fleet/kube"
)

// The node scripts/kube-node.sh starts: its address on the pods' bridge,
// the image it imported, and the namespace with the coordinator's Role.
const (
	kubeNodeAddr  = "10.244.0.1"
	kubeNodeImage = "obsbench.local/obsbench:dev"
	kubeNodeNS    = "perf"
)

// kubeNode is a running single-node cluster (scripts/kube-node.sh up):
// the kubeconfig of the coordinator's service account, which holds only
// deploy/kubernetes/rbac.yaml's Role, and an admin client the test uses
// to look and to break things. The test runs inside the node's network
// namespace (make kube-check), where the API server and the pods are.
type kubeNode struct {
	coordinator string
	admin       *kube.API
}

func needKubeNode(t *testing.T) kubeNode {
	t.Helper()
	needServers(t)
	dir := os.Getenv("OBSBENCH_KUBE_NODE")
	if dir == "" {
		t.Skip("no Kubernetes node: make kube-check starts one (scripts/kube-node.sh) and runs this test in it")
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", filepath.Join(dir, "admin.kubeconfig"))
	if err != nil {
		t.Fatal(err)
	}
	admin, err := kube.NewAPI(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := admin.List(ctx, "/api/v1/nodes", "", &corev1.NodeList{}); err != nil {
		t.Fatalf("OBSBENCH_KUBE_NODE=%s, but its API server does not answer (run the test inside the node's network namespace: bash scripts/kube-node.sh run ...): %v", dir, err)
	}
	return kubeNode{coordinator: filepath.Join(dir, "coordinator.kubeconfig"), admin: admin}
}

// serverForPods starts a PostgreSQL with settings that listens on the
// node's bridge address, where the pods reach it, and returns its DSN.
func serverForPods(t *testing.T, settings map[string]string) (*postgres.Instance, string) {
	t.Helper()
	settings = maps.Clone(settings)
	if settings == nil {
		settings = map[string]string{}
	}
	settings["listen_addresses"] = "'" + kubeNodeAddr + "'"
	settings["logging_collector"] = "on"
	pg := servertest.PostgresWith(t, settings)
	externalAdmin(t, pg)
	allowHosts(t, pg, "10.244.0.0/24")
	return pg, fmt.Sprintf("host=%s port=%d user=ext_admin dbname=ext sslmode=disable password=%s", kubeNodeAddr, pg.Port(), secret)
}

// objectsLeft counts the obsbench objects in the namespace.
func (k kubeNode) objectsLeft(ctx context.Context, t *testing.T) map[string]int {
	t.Helper()
	left := map[string]int{}
	for _, kind := range []string{"Job", "Service", "Secret", "EndpointSlice"} {
		var list struct{ Items []json.RawMessage }
		if err := k.admin.List(ctx, must(kube.Collection(kind, kubeNodeNS)), "app.kubernetes.io/name=obsbench", &list); err != nil {
			t.Fatal(err)
		}
		left[kind] = len(list.Items)
	}
	for kind, n := range left {
		if n == 0 {
			delete(left, kind)
		}
	}
	return left
}

// jobOf is the name of the Job the coordinator whose output is log
// created, "" before it did.
func jobOf(log string) string {
	m := regexp.MustCompile(`creating Job ` + kubeNodeNS + `/(\S+) of`).FindStringSubmatch(log)
	if m == nil {
		return ""
	}
	return m[1]
}

// workerPods lists the running pods of Job job: an earlier experiment's
// may still be going.
func (k kubeNode) workerPods(ctx context.Context, job string) []corev1.Pod {
	var pods corev1.PodList
	if err := k.admin.List(ctx, must(kube.Collection("Pod", kubeNodeNS)), "app.kubernetes.io/name=obsbench", &pods); err != nil {
		return nil
	}
	var running []corev1.Pod
	for _, p := range pods.Items {
		if job != "" && strings.HasPrefix(p.Name, job+"-") && p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp == nil {
			running = append(running, p)
		}
	}
	return running
}

// obsbench run with three worker pods on a real node, the coordinator
// outside the cluster with the Role's service account: the pods pull no
// image, find the coordinator by cluster DNS, reach the server over the
// pods' bridge, and each run's statements are all in the statement log.
func TestKubeNodeWorkers(t *testing.T) {
	k := needKubeNode(t)
	_, dsn := serverForPods(t, nil)
	ctx := context.Background()
	tmp := privateTemp(t)
	out := filepath.Join(tmp, "out")
	cmd, log := startObsbench(t, filepath.Join(tmp, "state"), "run", "--dsn", dsn, "--allow-changes",
		"--workers", "3", "--launcher", "kubernetes", "--image", kubeNodeImage, "--kubeconfig", k.coordinator,
		"--namespace", kubeNodeNS, "--advertise", kubeNodeAddr, "--observers", "log-statements-file",
		"--method", "rounds", "--rounds", "2", "--duration", "3s", "--warmup", "1s", "--clients", "6", "--seed", "3", "--out", out)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("obsbench: %v\n%s", err, log)
	}
	t.Logf("obsbench's output:\n%s", log)
	runs := readRuns(t, out)
	if len(runs) != 4 {
		t.Fatalf("%d runs; want 4\n%s", len(runs), log)
	}
	for _, r := range runs {
		d := r.Driver
		if r.Error != "" || len(d.Workers) != 3 || d.Executed == 0 {
			t.Errorf("run %d (%s): error %q, workers %+v, %d statements; want 3 workers", r.Seq, r.Condition, r.Error, d.Workers, d.Executed)
		}
		for _, w := range d.Workers {
			if w.Sessions != 2 || !strings.HasPrefix(w.Host, "obsbench-") {
				t.Errorf("run %d: worker %+v; want 2 sessions on a pod (host obsbench-...)", r.Seq, w)
			}
		}
		if r.Condition == "log-statements-file" && (r.Events == nil || r.Events.Recorded != r.Events.Executed) {
			t.Errorf("run %d: events %+v; want every statement of the three pods recorded", r.Seq, r.Events)
		}
	}
	for _, want := range []string{"workers (median of whole runs", "worker 2 on obsbench-"} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("the per-worker table lacks %q:\n%s", want, log)
		}
	}
	if left := k.objectsLeft(ctx, t); len(left) > 0 {
		t.Errorf("objects left after the experiment: %v", left)
	}
}

// A worker pod deleted in the middle of a run: that run fails naming the
// worker, the Job starts the index again, and the runs after it have
// their three workers. Then the coordinator is killed with its pods
// running: the next obsbench deletes the Job, Service, EndpointSlice and
// Secret it left.
func TestKubeNodeFaults(t *testing.T) {
	k := needKubeNode(t)
	_, dsn := serverForPods(t, nil)
	ctx := context.Background()
	tmp := privateTemp(t)
	state := filepath.Join(tmp, "state")
	args := func(out string, rounds int) []string {
		return []string{"run", "--dsn", dsn, "--allow-changes",
			"--workers", "3", "--launcher", "kubernetes", "--image", kubeNodeImage, "--kubeconfig", k.coordinator,
			"--namespace", kubeNodeNS, "--advertise", kubeNodeAddr, "--observers", "log-statements-file",
			"--method", "rounds", "--rounds", fmt.Sprint(rounds), "--duration", "4s", "--warmup", "1s", "--clients", "3", "--seed", "4", "--out", out}
	}

	out := filepath.Join(tmp, "deleted")
	cmd, log := startObsbench(t, state, args(out, 3)...)
	var victim string
	for deadline := time.Now().Add(3 * time.Minute); victim == "" && time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		// The first run's line is printed as it ends: two seconds later
		// the second run is inside its measured window.
		if !strings.Contains(log.String(), "[  1/") {
			continue
		}
		time.Sleep(2 * time.Second)
		if pods := k.workerPods(ctx, jobOf(log.String())); len(pods) == 3 {
			victim = pods[1].Name
			if err := k.admin.Delete(ctx, must(kube.Object("Pod", kubeNodeNS, victim)), &metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if victim == "" {
		t.Fatalf("no second run with three pods within 3 minutes:\n%s", log)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("obsbench: %v\n%s", err, log)
	}
	t.Logf("pod %s deleted in the second run; obsbench's output:\n%s", victim, log)
	runs := readRuns(t, out)
	failed, whole := 0, 0
	for _, r := range runs {
		switch {
		case r.Error != "":
			failed++
			if !strings.Contains(r.Error, "worker") {
				t.Errorf("run %d failed with %q; want the worker named", r.Seq, r.Error)
			}
		case len(r.Driver.Workers) == 3:
			whole++
		}
	}
	if failed < 1 || whole < len(runs)-failed || runs[len(runs)-1].Error != "" {
		t.Errorf("%d runs failed, %d whole of %d, the last %q; want the run with pod %s deleted failed and the rest whole\n%s",
			failed, whole, len(runs), runs[len(runs)-1].Error, victim, log)
	}

	// The coordinator killed: its objects stay until the next start.
	cmd, log = startObsbench(t, state, args(filepath.Join(tmp, "killed"), 2)...)
	for deadline := time.Now().Add(3 * time.Minute); len(k.workerPods(ctx, jobOf(log.String()))) < 3; time.Sleep(200 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no three pods within 3 minutes:\n%s", log)
		}
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	if left := k.objectsLeft(ctx, t); len(left) == 0 {
		t.Fatal("no object left by a killed coordinator; the test proves nothing")
	}
	var stdout, stderr bytes.Buffer
	t.Setenv("OBSBENCH_STATE_DIR", state)
	code := run(ctx, args(filepath.Join(tmp, "next"), 2), &stdout, &stderr)
	if code != exitOK || !strings.Contains(stderr.String(), "an obsbench that did not finish left in the cluster") {
		t.Errorf("next start: exit %d; want the objects left deleted, then the experiment:\n%s", code, stderr.String())
	}
	t.Logf("the next start after a killed coordinator:\n%s", stderr.String())
	if left := k.objectsLeft(ctx, t); len(left) > 0 {
		t.Errorf("objects left after the next start: %v", left)
	}
}

// The coordinator inside the cluster, as deploy/kubernetes/coordinator.yaml
// runs it (its service account, the Role, the downward API), with the
// image imported on the node and a short experiment: it reaches the API
// server by the kubernetes Service, its workers find it at its pod's
// address, and it ends with the table on its log and nothing left.
func TestKubeNodeCoordinatorPod(t *testing.T) {
	k := needKubeNode(t)
	// The manifest's observer, pg_stat_statements, preloaded as on a
	// server obsbench may not restart; a file sink would be out of the
	// pod's reach (events not collected: the data directory is not on
	// its machine).
	_, dsn := serverForPods(t, map[string]string{"shared_preload_libraries": "'pg_stat_statements'"})
	ctx := context.Background()
	b, err := os.ReadFile("../../deploy/kubernetes/coordinator.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var pod corev1.Pod
	if err := yaml.UnmarshalStrict(b, &pod); err != nil {
		t.Fatal(err)
	}
	c := &pod.Spec.Containers[0]
	c.Image = kubeNodeImage
	for i, a := range c.Args {
		c.Args[i] = strings.ReplaceAll(a, "REGISTRY/obsbench:VERSION", kubeNodeImage)
	}
	// The manifest's experiment, shorter; the last of a repeated flag wins.
	c.Args = append(c.Args, "--workers", "3", "--clients", "6", "--method", "rounds", "--rounds", "2", "--duration", "3s", "--warmup", "1s")
	secrets, pods := must(kube.Collection("Secret", pod.Namespace)), must(kube.Collection("Pod", pod.Namespace))
	target := &corev1.Secret{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"}, ObjectMeta: metav1.ObjectMeta{Name: "obsbench-target"},
		StringData: map[string]string{"dsn": dsn}}
	if err := k.admin.Create(ctx, secrets, target); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		zero := int64(0)
		k.admin.Delete(ctx, pods+"/"+pod.Name, &metav1.DeleteOptions{GracePeriodSeconds: &zero})
		k.admin.Delete(ctx, secrets+"/obsbench-target", nil)
	})
	if err := k.admin.Create(ctx, pods, &pod); err != nil {
		t.Fatal(err)
	}
	var phase corev1.PodPhase
	for deadline := time.Now().Add(4 * time.Minute); phase != corev1.PodSucceeded && phase != corev1.PodFailed; time.Sleep(time.Second) {
		if time.Now().After(deadline) {
			t.Fatalf("coordinator pod %s after 4 minutes", phase)
		}
		var p corev1.Pod
		if err := k.admin.Get(ctx, pods+"/"+pod.Name, &p); err == nil {
			phase = p.Status.Phase
		}
	}
	logs, err := k.admin.Raw(ctx, pods+"/"+pod.Name+"/log")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("coordinator pod %s; its log:\n%s", phase, logs)
	if phase != corev1.PodSucceeded {
		t.Fatalf("coordinator pod %s", phase)
	}
	for _, want := range []string{"creating Job perf/obsbench-", "worker 2 registered", "workers (median of whole runs", "pg-stat-statements"} {
		if !bytes.Contains(logs, []byte(want)) {
			t.Errorf("coordinator's log lacks %q", want)
		}
	}
	if left := k.objectsLeft(ctx, t); len(left) > 0 {
		t.Errorf("objects left after the coordinator pod ended: %v", left)
	}
}
