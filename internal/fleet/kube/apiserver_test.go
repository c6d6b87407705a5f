package kube

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	authv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
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
	root := kubernetes.NewForConfigOrDie(cfg)
	if _, err := root.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "perf"}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	applyRBAC(t, root)
	tok, err := root.CoreV1().ServiceAccounts("perf").CreateToken(ctx, "obsbench-coordinator", &authv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	saCfg := rest.AnonymousClientConfig(cfg)
	saCfg.BearerToken = tok.Status.Token
	sa := kubernetes.NewForConfigOrDie(saCfg)

	objs, err := Build(options(), "s3cret")
	if err != nil {
		t.Fatal(err)
	}
	l, err := Launch(ctx, sa, objs, t.TempDir())
	if err != nil {
		t.Fatalf("launch as the coordinator's service account: %v", err)
	}
	job, err := root.BatchV1().Jobs("perf").Get(ctx, objs.Job.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	js := job.Spec
	if *js.Completions != 3 || *js.CompletionMode != "Indexed" || *js.BackoffLimitPerIndex != 3 || js.Template.Spec.Containers[0].Image != options().Image ||
		len(job.OwnerReferences) != 1 || job.OwnerReferences[0].UID != options().Owner.UID {
		t.Errorf("job as stored: %+v", js)
	}
	slice, err := root.DiscoveryV1().EndpointSlices("perf").Get(ctx, objs.EndpointSlice.Name, metav1.GetOptions{})
	if err != nil || slice.Endpoints[0].Addresses[0] != "10.1.2.3" {
		t.Errorf("endpoint slice as stored: %+v, %v", slice, err)
	}
	// Nothing beyond the Role: not even reading what it created.
	if _, err := sa.CoreV1().Pods("perf").List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("listing pods as the service account: %v; want forbidden", err)
	}
	if _, err := sa.BatchV1().Jobs("perf").Get(ctx, objs.Job.Name, metav1.GetOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("reading the Job as the service account: %v; want forbidden", err)
	}
	if err := l.Delete(ctx); err != nil {
		t.Fatalf("delete as the coordinator's service account: %v", err)
	}
	if _, err := root.CoreV1().Secrets("perf").Get(ctx, objs.Secret.Name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("secret after Delete: %v; want not found", err)
	}
}

// applyRBAC creates deploy/kubernetes/rbac.yaml's objects as they are.
func applyRBAC(t *testing.T, c kubernetes.Interface) {
	t.Helper()
	ctx := context.Background()
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "deploy", "kubernetes", "rbac.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, doc := range strings.Split(string(b), "\n---\n") {
		var kind struct{ Kind string }
		if err := yaml.Unmarshal([]byte(doc), &kind); err != nil {
			t.Fatal(err)
		}
		var err error
		switch kind.Kind {
		case "ServiceAccount":
			var o corev1.ServiceAccount
			yaml.Unmarshal([]byte(doc), &o)
			_, err = c.CoreV1().ServiceAccounts(o.Namespace).Create(ctx, &o, metav1.CreateOptions{})
		case "Role":
			var o rbacv1.Role
			yaml.Unmarshal([]byte(doc), &o)
			_, err = c.RbacV1().Roles(o.Namespace).Create(ctx, &o, metav1.CreateOptions{})
		case "RoleBinding":
			var o rbacv1.RoleBinding
			yaml.Unmarshal([]byte(doc), &o)
			_, err = c.RbacV1().RoleBindings(o.Namespace).Create(ctx, &o, metav1.CreateOptions{})
		default:
			t.Fatalf("rbac.yaml: unexpected %s", kind.Kind)
		}
		if err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatalf("rbac.yaml %s: %v", kind.Kind, err)
		}
	}
}
