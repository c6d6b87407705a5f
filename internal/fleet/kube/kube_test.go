package kube

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"

	"github.com/obsbench/obsbench/internal/fleet/kube/kubetest"
	"github.com/obsbench/obsbench/internal/journal"
)

var update = flag.Bool("update", false, "rewrite testdata/manifest.yaml")

func options() Options {
	return Options{Experiment: "e1", Namespace: "perf", Image: "registry.example/obsbench:0.1.0", Workers: 3, Port: 7400,
		AdvertiseIP: "10.1.2.3", Owner: &Owner{Name: "coordinator-0", Namespace: "perf", UID: "8c6d1b9e-0000-4000-8000-000000000001"},
		CPU: "1", Memory: "256Mi", Spread: true}
}

// manifest renders objs as the YAML documents kubectl would apply.
func manifest(t *testing.T, objs Objects) []byte {
	t.Helper()
	var b bytes.Buffer
	for i, o := range []any{objs.Secret, objs.Service, objs.EndpointSlice, objs.Job} {
		y, err := yaml.Marshal(o)
		if err != nil {
			t.Fatal(err)
		}
		if i > 0 {
			b.WriteString("---\n")
		}
		b.Write(y)
	}
	return b.Bytes()
}

// The objects a launch creates, field by field, are the reviewed golden
// manifest (testdata/manifest.yaml); the rules behind them hold whatever
// the golden file says: each owned by the coordinator's pod, the Job
// Indexed with one pod per worker that never reaches the API server, the
// token only in the Secret, the Service headless with the coordinator's
// address as its one endpoint.
func TestManifestGolden(t *testing.T) {
	objs, err := Build(options(), "s3cret")
	if err != nil {
		t.Fatal(err)
	}
	got := manifest(t, objs)
	path := filepath.Join("testdata", "manifest.yaml")
	if *update {
		os.MkdirAll("testdata", 0o755)
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("objects differ from %s (-update rewrites it):\n%s", path, got)
	}

	for _, m := range []metav1.ObjectMeta{objs.Secret.ObjectMeta, objs.Service.ObjectMeta, objs.EndpointSlice.ObjectMeta, objs.Job.ObjectMeta} {
		if len(m.OwnerReferences) != 1 || m.OwnerReferences[0].UID != options().Owner.UID || m.OwnerReferences[0].Kind != "Pod" {
			t.Errorf("%s: owners %+v; want the coordinator's pod", m.Name, m.OwnerReferences)
		}
		if m.Namespace != "perf" || m.Labels[LabelExperiment] != "e1" {
			t.Errorf("%s: namespace %q, labels %v", m.Name, m.Namespace, m.Labels)
		}
	}
	js := objs.Job.Spec
	if *js.Completions != 3 || *js.Parallelism != 3 || string(*js.CompletionMode) != "Indexed" {
		t.Errorf("job: %d completions, %d parallel, mode %s; want 3, 3, Indexed", *js.Completions, *js.Parallelism, *js.CompletionMode)
	}
	pod := js.Template.Spec
	if *pod.AutomountServiceAccountToken || len(pod.Containers) != 1 {
		t.Errorf("pod: service account token mounted or %d containers", len(pod.Containers))
	}
	c := pod.Containers[0]
	if strings.Join(c.Args, " ") != "worker --coordinator obsbench-e1.perf.svc:7400" {
		t.Errorf("worker args %q", c.Args)
	}
	if len(c.Env) != 1 || c.Env[0].Value != "" || c.Env[0].ValueFrom.SecretKeyRef.Name != objs.Secret.Name {
		t.Errorf("worker env %+v; want the token from the Secret only", c.Env)
	}
	b, _ := json.Marshal(objs.Job)
	if bytes.Contains(b, []byte("s3cret")) {
		t.Error("the token is in the Job")
	}
	if objs.Service.Spec.ClusterIP != "None" || objs.Service.Spec.Selector != nil ||
		objs.EndpointSlice.Labels["kubernetes.io/service-name"] != objs.Service.Name || objs.EndpointSlice.Endpoints[0].Addresses[0] != "10.1.2.3" {
		t.Errorf("service %+v, endpoints %+v; want headless, no selector, the coordinator's address", objs.Service.Spec, objs.EndpointSlice)
	}
}

// Options no object could be made of are refused with what is wrong.
func TestBadOptions(t *testing.T) {
	for _, tc := range []struct {
		change func(*Options)
		want   string
	}{
		{func(o *Options) { o.Experiment = "E_1" }, `experiment name "E_1"`},
		{func(o *Options) { o.Image = "" }, "no image: give --image"},
		{func(o *Options) { o.AdvertiseIP = "" }, "no address for the workers"},
		{func(o *Options) { o.AdvertiseIP = "coordinator.local" }, `address "coordinator.local": want an IPv4 address`},
		{func(o *Options) { o.CPU = "lots" }, `quantity "lots"`},
		{func(o *Options) { o.Owner.Namespace = "default" }, "an owner must be in its objects' namespace"},
	} {
		o := options()
		tc.change(&o)
		if _, err := Build(o, "t"); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Build: %v; want %q", err, tc.want)
		}
	}
}

// A launch creates the four objects (against an API server in memory,
// kubetest: no cluster runs here), journaling each first; Delete removes
// them and the journal. A launch whose obsbench died leaves its journal:
// Cleanup, at the next start, deletes what it names.
func TestLaunchDeleteCleanup(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	srv, client := startAPI(t)
	objs, _ := Build(options(), "s3cret")
	l, err := Launch(ctx, client, objs, dir)
	if err != nil {
		t.Fatal(err)
	}
	var job batchv1.Job
	if err := client.Get(ctx, "/apis/batch/v1/namespaces/perf/jobs/obsbench-e1-workers", &job); err != nil || job.Spec.Completions == nil || *job.Spec.Completions != 3 {
		t.Errorf("job not created as built: %+v, %v", job.Spec, err)
	}
	paths, _ := journal.List(dir)
	if len(paths) != 1 {
		t.Fatalf("%d journals; want 1", len(paths))
	}
	if _, pending, _ := journal.Read(paths[0]); len(pending) != 4 {
		t.Errorf("%d objects journaled; want 4", len(pending))
	}
	if err := l.Delete(ctx); err != nil {
		t.Fatal(err)
	}
	if n := srv.Count("/apis/batch/v1/namespaces/perf/jobs"); n != 0 {
		t.Errorf("%d jobs left after Delete", n)
	}
	if paths, _ := journal.List(dir); len(paths) != 0 {
		t.Errorf("journal left after Delete: %v", paths)
	}

	// A crash: the journal stays, written by a process that is gone.
	l, err = Launch(ctx, client, objs, dir)
	if err != nil {
		t.Fatal(err)
	}
	l.journal.Close()
	paths, _ = journal.List(dir)
	rewritePID(t, paths[0], 999999999)
	n, err := Cleanup(ctx, client, dir)
	if err != nil || n != 4 {
		t.Fatalf("Cleanup: %d objects, %v; want 4", n, err)
	}
	if n := srv.Count("/api/v1/namespaces/perf/services"); n != 0 {
		t.Errorf("%d services left after Cleanup", n)
	}
	if paths, _ := journal.List(dir); len(paths) != 0 {
		t.Errorf("journal left after Cleanup: %v", paths)
	}
}

// rewritePID makes a journal's header name another writer.
func rewritePID(t *testing.T, path string, pid int) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitN(string(b), "\n", 2)
	var h journal.Entry
	if err := json.Unmarshal([]byte(lines[0]), &h); err != nil {
		t.Fatal(err)
	}
	h.PID = pid
	hb, _ := json.Marshal(h)
	if err := os.WriteFile(path, append(append(hb, '\n'), lines[1]...), 0o600); err != nil {
		t.Fatal(err)
	}
}

// Rules the API server enforces or documents, read from the API's own
// documentation (the doc comments of k8s.io/api and apimachinery v0.37.2,
// which are the API reference's text), checked on the objects of several
// launches: no cluster runs here to refuse a wrong one.
func TestObjectsFollowTheAPIRules(t *testing.T) {
	for _, o := range []Options{options(), {Experiment: "a", Namespace: "default", Image: "obsbench", Workers: 1, Port: 1, AdvertiseIP: "192.168.0.9"},
		{Experiment: "run-20261125-2040", Namespace: "ns", Image: "i", Workers: 64, Port: 65535, AdvertiseIP: "10.0.0.1", Owner: &Owner{Name: "p", Namespace: "ns", UID: "u"}}} {
		objs, err := Build(o, "t")
		if err != nil {
			t.Fatal(err)
		}
		js := objs.Job.Spec
		pod := js.Template.Spec
		for _, r := range []struct {
			doc string
			ok  bool
		}{
			// batch/v1 JobSpec.CompletionMode: "When value is `Indexed`,
			// .spec.completions must be specified".
			{"Indexed needs completions", *js.CompletionMode != "Indexed" || js.Completions != nil},
			// JobSpec.BackoffLimitPerIndex: "It can only be set when Job's
			// completionMode=Indexed, and the Pod's restart policy is Never."
			{"backoffLimitPerIndex needs Indexed and restartPolicy Never", js.BackoffLimitPerIndex == nil ||
				(*js.CompletionMode == "Indexed" && pod.RestartPolicy == "Never")},
			// JobSpec.MaxFailedIndexes: "It can only be specified when
			// backoffLimitPerIndex is set. It can be null or up to completions."
			{"maxFailedIndexes needs backoffLimitPerIndex, at most completions", js.MaxFailedIndexes == nil ||
				(js.BackoffLimitPerIndex != nil && *js.MaxFailedIndexes <= *js.Completions)},
			// core/v1 Service: ClusterIPNone "do not assign a cluster IP"
			// (headless); discovery/v1 LabelServiceName ties a slice to its
			// Service, LabelManagedBy is "highly recommended" on every slice.
			{"headless service with its slice", objs.Service.Spec.ClusterIP == "None" &&
				objs.EndpointSlice.Labels["kubernetes.io/service-name"] == objs.Service.Name &&
				objs.EndpointSlice.Labels["endpointslice.kubernetes.io/managed-by"] != ""},
			// Service names are DNS-1035 labels, other names DNS-1123
			// subdomains, label values at most 63 characters of a set.
			{"names and labels valid", len(validation.IsDNS1035Label(objs.Service.Name)) == 0 &&
				len(validation.IsDNS1123Subdomain(objs.Job.Name)) == 0 && len(validation.IsDNS1123Subdomain(objs.Secret.Name)) == 0 &&
				len(validation.IsDNS1123Subdomain(objs.EndpointSlice.Name)) == 0 && validLabels(objs.Job.Labels) && validLabels(js.Template.Labels)},
			// A worker's pod never calls the API server.
			{"no service account token in workers", pod.AutomountServiceAccountToken != nil && !*pod.AutomountServiceAccountToken},
		} {
			if !r.ok {
				t.Errorf("experiment %s: %s", o.Experiment, r.doc)
			}
		}
	}
}

func validLabels(m map[string]string) bool {
	for k, v := range m {
		if len(validation.IsQualifiedName(k)) > 0 || len(validation.IsValidLabelValue(v)) > 0 {
			return false
		}
	}
	return true
}

// deploy/kubernetes/rbac.yaml grants the coordinator exactly what a
// launch and its cleanup call: create and delete of the four kinds of
// object, nothing else; coordinator.yaml gives the coordinator the
// downward-API variables it reads to own them and to be reached.
func TestDeployManifests(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "deploy", "kubernetes", "rbac.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	granted := map[string]bool{}
	for _, doc := range strings.Split(string(b), "\n---\n") {
		var role rbacv1.Role
		if err := yaml.UnmarshalStrict([]byte(doc), &role, yaml.DisallowUnknownFields); err != nil {
			var any map[string]any
			if yaml.Unmarshal([]byte(doc), &any) != nil || any["kind"] == "Role" {
				t.Fatalf("rbac.yaml: %v", err)
			}
			continue
		}
		if role.Kind != "Role" {
			continue
		}
		for _, r := range role.Rules {
			for _, g := range r.APIGroups {
				for _, res := range r.Resources {
					for _, v := range r.Verbs {
						granted[g+"/"+res+":"+v] = true
					}
				}
			}
		}
	}
	want := map[string]bool{}
	for _, gr := range []string{"batch/jobs", "/services", "/secrets", "discovery.k8s.io/endpointslices"} {
		for _, v := range []string{"create", "delete"} {
			want[gr+":"+v] = true
		}
	}
	if !maps.Equal(granted, want) {
		t.Errorf("rbac.yaml grants %v; want exactly %v", slices.Sorted(maps.Keys(granted)), slices.Sorted(maps.Keys(want)))
	}

	b, err = os.ReadFile(filepath.Join("..", "..", "..", "deploy", "kubernetes", "coordinator.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var pod corev1.Pod
	if err := yaml.UnmarshalStrict(b, &pod); err != nil {
		t.Fatalf("coordinator.yaml: %v", err)
	}
	env := map[string]string{}
	for _, e := range pod.Spec.Containers[0].Env {
		if e.ValueFrom != nil && e.ValueFrom.FieldRef != nil {
			env[e.Name] = e.ValueFrom.FieldRef.FieldPath
		}
	}
	for name, path := range map[string]string{"POD_NAME": "metadata.name", "POD_NAMESPACE": "metadata.namespace", "POD_UID": "metadata.uid", "POD_IP": "status.podIP"} {
		if env[name] != path {
			t.Errorf("coordinator.yaml: %s from %q; want %s", name, env[name], path)
		}
	}
	if pod.Spec.ServiceAccountName != "obsbench-coordinator" {
		t.Errorf("coordinator.yaml runs as %q; want the service account of rbac.yaml", pod.Spec.ServiceAccountName)
	}
}

// The API server's refusals come back typed, with its message: a name
// taken, an object not there.
func TestAPIRefusals(t *testing.T) {
	ctx := context.Background()
	_, api := startAPI(t)
	objs, _ := Build(options(), "s3cret")
	secrets, _ := Collection("Secret", "perf")
	if err := api.Create(ctx, secrets, objs.Secret); err != nil {
		t.Fatal(err)
	}
	err := api.Create(ctx, secrets, objs.Secret)
	if !IsAlreadyExists(err) || IsNotFound(err) || !strings.Contains(err.Error(), "already exists") {
		t.Errorf("second create: %v; want already exists, with the server's message", err)
	}
	gone, _ := Object("Job", "perf", "no-such-job")
	if err := api.Delete(ctx, gone, nil); !IsNotFound(err) || !strings.Contains(err.Error(), "DELETE /apis/batch/v1/namespaces/perf/jobs/no-such-job: 404") {
		t.Errorf("delete of a missing object: %v; want not found, naming the request", err)
	}
	if _, err := Collection("ConfigMap", "perf"); err == nil {
		t.Error("a kind obsbench never creates has a path")
	}
}

// startAPI starts an API server in memory and returns it with a client.
func startAPI(t *testing.T) (*kubetest.Server, *API) {
	t.Helper()
	srv := kubetest.Start(t)
	api, err := NewAPIAt(srv.URL, srv.Client())
	if err != nil {
		t.Fatal(err)
	}
	return srv, api
}
