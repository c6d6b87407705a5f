package kube

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	authv1 "k8s.io/api/authentication/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/yaml"
)

// On a real kube-apiserver (with etcd; no controllers, no nodes), as the
// service account of deploy/kubernetes/rbac.yaml: the API server's own
// validation accepts the objects of a launch, their fields come back as
// sent, the Role suffices to create and delete them and allows nothing
// else. scripts/kube-apiserver-check.sh builds kube-apiserver from the
// Go module proxy, starts it on loopback with Debian's etcd, and runs this
// test with OBSBENCH_TEST_KUBECONFIG set to its admin's kubeconfig; the
// build takes too long for the test command, where it is skipped.
func TestRealAPIServer(t *testing.T) {
	admin := os.Getenv("OBSBENCH_TEST_KUBECONFIG")
	if admin == "" {
		t.Skip("no API server: scripts/kube-apiserver-check.sh starts one and runs this test")
	}
	ctx := context.Background()
	cfg, err := clientcmd.BuildConfigFromFlags("", admin)
	if err != nil {
		t.Fatal(err)
	}
	root, err := NewAPI(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ns := &corev1.Namespace{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"}, ObjectMeta: metav1.ObjectMeta{Name: "perf"}}
	if err := root.Create(ctx, "/api/v1/namespaces", ns); err != nil && !IsAlreadyExists(err) {
		t.Fatal(err)
	}
	applyRBAC(t, root)
	var tok authv1.TokenRequest
	if err := root.Post(ctx, "/api/v1/namespaces/perf/serviceaccounts/obsbench-coordinator/token",
		&authv1.TokenRequest{TypeMeta: metav1.TypeMeta{APIVersion: "authentication.k8s.io/v1", Kind: "TokenRequest"}}, &tok); err != nil {
		t.Fatal(err)
	}
	saCfg := rest.AnonymousClientConfig(cfg)
	saCfg.BearerToken = tok.Status.Token
	sa, err := NewAPI(saCfg)
	if err != nil {
		t.Fatal(err)
	}

	objs, err := Build(options(), "s3cret")
	if err != nil {
		t.Fatal(err)
	}
	l, err := Launch(ctx, sa, objs, t.TempDir())
	if err != nil {
		t.Fatalf("launch as the coordinator's service account: %v", err)
	}
	jobPath := must(Object("Job", "perf", objs.Job.Name))
	var job batchv1.Job
	if err := root.Get(ctx, jobPath, &job); err != nil {
		t.Fatal(err)
	}
	js := job.Spec
	if *js.Completions != 3 || *js.CompletionMode != "Indexed" || *js.BackoffLimitPerIndex != 3 || js.Template.Spec.Containers[0].Image != options().Image ||
		len(job.OwnerReferences) != 1 || job.OwnerReferences[0].UID != options().Owner.UID {
		t.Errorf("job as stored: %+v", js)
	}
	var slice discoveryv1.EndpointSlice
	if err := root.Get(ctx, must(Object("EndpointSlice", "perf", objs.EndpointSlice.Name)), &slice); err != nil || slice.Endpoints[0].Addresses[0] != "10.1.2.3" {
		t.Errorf("endpoint slice as stored: %+v, %v", slice, err)
	}
	// Nothing beyond the Role: not even reading what it created.
	if err := sa.List(ctx, must(Collection("Pod", "perf")), "", &corev1.PodList{}); !IsForbidden(err) {
		t.Errorf("listing pods as the service account: %v; want forbidden", err)
	}
	if err := sa.Get(ctx, jobPath, &batchv1.Job{}); !IsForbidden(err) {
		t.Errorf("reading the Job as the service account: %v; want forbidden", err)
	}
	if err := l.Delete(ctx); err != nil {
		t.Fatalf("delete as the coordinator's service account: %v", err)
	}
	if err := root.Get(ctx, must(Object("Secret", "perf", objs.Secret.Name)), &corev1.Secret{}); !IsNotFound(err) {
		t.Errorf("secret after Delete: %v; want not found", err)
	}
}

func must(path string, err error) string {
	if err != nil {
		panic(err)
	}
	return path
}

// applyRBAC creates deploy/kubernetes/rbac.yaml's objects as they are.
func applyRBAC(t *testing.T, c *API) {
	t.Helper()
	ctx := context.Background()
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "deploy", "kubernetes", "rbac.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, doc := range strings.Split(string(b), "\n---\n") {
		var o struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
			Metadata   struct{ Namespace string }
		}
		if err := yaml.Unmarshal([]byte(doc), &o); err != nil {
			t.Fatal(err)
		}
		var obj map[string]any
		yaml.Unmarshal([]byte(doc), &obj)
		var collection string
		switch o.Kind {
		case "ServiceAccount":
			collection = "/api/v1/namespaces/" + o.Metadata.Namespace + "/serviceaccounts"
		case "Role":
			collection = "/apis/rbac.authorization.k8s.io/v1/namespaces/" + o.Metadata.Namespace + "/roles"
		case "RoleBinding":
			collection = "/apis/rbac.authorization.k8s.io/v1/namespaces/" + o.Metadata.Namespace + "/rolebindings"
		default:
			t.Fatalf("rbac.yaml: unexpected %s", o.Kind)
		}
		if err := c.Create(ctx, collection, obj); err != nil && !IsAlreadyExists(err) {
			t.Fatalf("rbac.yaml %s: %v", o.Kind, err)
		}
	}
}
