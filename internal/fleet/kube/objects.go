// Package kube starts an experiment's workers on Kubernetes: an Indexed
// Job of N pods that run obsbench worker, a headless Service by which they
// find the coordinator, and a Secret with the coordinator's token. Every
// object is owned by the coordinator's pod, when it runs in one, so that
// deleting that pod removes them; obsbench deletes them itself at the end,
// on Ctrl-C, and after a crash at its next start (each object is journaled
// before it is created).
//
// Objects builds them as plain API objects (checked against a golden
// manifest); Launcher creates and deletes them through the API server's
// REST paths (API).
package kube

import (
	"fmt"
	"net"
	"strconv"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/obsbench/obsbench/internal/fleet"
)

// Labels on every object obsbench creates.
const (
	LabelName       = "app.kubernetes.io/name"
	LabelManagedBy  = "app.kubernetes.io/managed-by"
	LabelExperiment = "obsbench.io/experiment"
	name            = "obsbench"
	portName        = "coordinator"
	tokenKey        = "token"
)

// Options describe one experiment's workers.
type Options struct {
	// Experiment names the objects: obsbench-EXPERIMENT-workers and so
	// on; lower case letters, digits and '-' (a DNS label).
	Experiment string
	Namespace  string
	Image      string
	Workers    int
	// Port is where the coordinator listens; AdvertiseIP is the address
	// the workers reach it at (its pod's IP in a cluster).
	Port        int32
	AdvertiseIP string
	// Owner is the coordinator's pod, nil when it runs outside the
	// cluster: the objects are then deleted by obsbench alone.
	Owner *Owner
	// CPU and Memory, when set, are each worker's request and limit
	// ("1", "512Mi"): a worker short of CPU offers less load.
	CPU, Memory string
	// Spread, if true, asks the scheduler to put the workers on distinct
	// nodes where it can (preferred pod anti-affinity).
	Spread bool
}

// Owner is the pod that owns the objects.
type Owner struct {
	Name, Namespace string
	UID             types.UID
}

// Objects are what a launch creates, in the order it creates them.
type Objects struct {
	Secret        *corev1.Secret
	Service       *corev1.Service
	EndpointSlice *discoveryv1.EndpointSlice
	Job           *batchv1.Job
}

// prefix is the objects' common name.
func (o Options) prefix() string { return name + "-" + o.Experiment }

// ServiceHost is the DNS name the workers reach the coordinator at.
func (o Options) ServiceHost() string {
	return fmt.Sprintf("%s.%s.svc", o.prefix(), o.Namespace)
}

// Build returns the objects of o, the token in the Secret.
func Build(o Options, token string) (Objects, error) {
	if err := o.check(); err != nil {
		return Objects{}, err
	}
	p := o.prefix()
	secret := &corev1.Secret{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: o.meta(p+"-token", nil),
		Type:       corev1.SecretTypeOpaque,
		Data:       map[string][]byte{tokenKey: []byte(token)},
	}
	svc, slice := o.coordinatorService()
	return Objects{Secret: secret, Service: svc, EndpointSlice: slice, Job: o.job(secret.Name)}, nil
}

// meta is the metadata of object n: the labels every object of o has,
// and extra; owned by o.Owner, if any, so that they go with it.
func (o Options) meta(n string, extra map[string]string) metav1.ObjectMeta {
	labels := map[string]string{LabelName: name, LabelManagedBy: name, LabelExperiment: o.Experiment}
	m := metav1.ObjectMeta{Name: n, Namespace: o.Namespace, Labels: map[string]string{}}
	for k, v := range labels {
		m.Labels[k] = v
	}
	for k, v := range extra {
		m.Labels[k] = v
	}
	if o.Owner != nil {
		m.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: o.Owner.Name, UID: o.Owner.UID}}
	}
	return m
}

// coordinatorService is the Service the workers reach the coordinator
// by, headless and without a selector: its endpoint is the coordinator's
// address, given by the EndpointSlice, whichever pod (or machine) it runs
// on.
func (o Options) coordinatorService() (*corev1.Service, *discoveryv1.EndpointSlice) {
	p := o.prefix()
	svc := &corev1.Service{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: o.meta(p, nil),
		Spec: corev1.ServiceSpec{
			ClusterIP: corev1.ClusterIPNone,
			Ports:     []corev1.ServicePort{{Name: portName, Port: o.Port, TargetPort: intstr.FromInt32(o.Port), Protocol: corev1.ProtocolTCP}},
		},
	}
	pn, tcp, ready := portName, corev1.ProtocolTCP, true
	port := o.Port
	slice := &discoveryv1.EndpointSlice{
		TypeMeta:    metav1.TypeMeta{APIVersion: "discovery.k8s.io/v1", Kind: "EndpointSlice"},
		ObjectMeta:  o.meta(p+"-coordinator", map[string]string{discoveryv1.LabelServiceName: p, discoveryv1.LabelManagedBy: name}),
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{o.AdvertiseIP}, Conditions: discoveryv1.EndpointConditions{Ready: &ready}}},
		Ports:       []discoveryv1.EndpointPort{{Name: &pn, Protocol: &tcp, Port: &port}},
	}
	return svc, slice
}

// job is the Indexed Job of o.Workers worker pods, each reading its
// token from the Secret named secret.
func (o Options) job(secret string) *batchv1.Job {
	n := int32(o.Workers)
	indexed := batchv1.IndexedCompletion
	// A worker that fails is started again, as obsbench's local launcher
	// does, a few times per index; then the Job gives that index up.
	perIndex, maxFailed := int32(3), n
	ttl := int32(600)
	noToken := false
	podLabels := map[string]string{LabelName: name, LabelExperiment: o.Experiment}
	pod := corev1.PodSpec{
		RestartPolicy:                corev1.RestartPolicyNever,
		AutomountServiceAccountToken: &noToken, // a worker never talks to the API server
		Containers:                   []corev1.Container{o.container(secret)},
	}
	if o.Spread {
		pod.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
			PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{Weight: 100, PodAffinityTerm: corev1.PodAffinityTerm{
				TopologyKey:   "kubernetes.io/hostname",
				LabelSelector: &metav1.LabelSelector{MatchLabels: podLabels},
			}}},
		}}
	}
	return &batchv1.Job{
		TypeMeta:   metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
		ObjectMeta: o.meta(o.prefix()+"-workers", nil),
		Spec: batchv1.JobSpec{
			Completions: &n, Parallelism: &n, CompletionMode: &indexed,
			BackoffLimitPerIndex: &perIndex, MaxFailedIndexes: &maxFailed,
			TTLSecondsAfterFinished: &ttl,
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: podLabels},
				Spec:       pod,
			},
		},
	}
}

// container is a worker pod's container: obsbench worker, as a non-root
// user without privileges, its requests and limits those of o.
func (o Options) container(secret string) corev1.Container {
	nonRoot, noEscalation, readOnly := true, false, true
	uid := int64(65532) // distroless's nonroot
	container := corev1.Container{
		Name:  "worker",
		Image: o.Image,
		Args:  []string{"worker", "--coordinator", o.ServiceHost() + ":" + strconv.Itoa(int(o.Port))},
		Env: []corev1.EnvVar{{Name: fleet.TokenEnv, ValueFrom: &corev1.EnvVarSource{
			SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: secret}, Key: tokenKey}}}},
		SecurityContext: &corev1.SecurityContext{
			RunAsNonRoot: &nonRoot, RunAsUser: &uid, AllowPrivilegeEscalation: &noEscalation, ReadOnlyRootFilesystem: &readOnly,
			Capabilities:   &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
			SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
		},
	}
	if o.CPU != "" || o.Memory != "" {
		rl := corev1.ResourceList{}
		if o.CPU != "" {
			rl[corev1.ResourceCPU] = resource.MustParse(o.CPU)
		}
		if o.Memory != "" {
			rl[corev1.ResourceMemory] = resource.MustParse(o.Memory)
		}
		container.Resources = corev1.ResourceRequirements{Requests: rl, Limits: rl}
	}
	return container
}

// check refuses options no object could be made of.
func (o Options) check() error {
	switch {
	case len(validation.IsDNS1035Label(o.prefix()+"-coordinator")) > 0:
		return fmt.Errorf("experiment name %q: want at most %d lower-case letters, digits and '-' (a DNS label)", o.Experiment, 63-len(name)-1-len("-coordinator"))
	case o.Namespace == "":
		return fmt.Errorf("no namespace")
	case o.Owner != nil && o.Owner.Namespace != o.Namespace:
		// "An owning object must be in the same namespace as the
		// dependent" (k8s.io/apimachinery/pkg/apis/meta/v1, OwnerReference).
		return fmt.Errorf("namespace %s: the coordinator's pod is in %s, and an owner must be in its objects' namespace", o.Namespace, o.Owner.Namespace)
	case o.Image == "":
		return fmt.Errorf("no image: give --image")
	case o.Workers < 1:
		return fmt.Errorf("%d workers", o.Workers)
	case o.Port < 1 || o.Port > 65535:
		return fmt.Errorf("port %d", o.Port)
	case o.AdvertiseIP == "":
		return fmt.Errorf("no address for the workers to reach the coordinator at")
	case net.ParseIP(o.AdvertiseIP).To4() == nil:
		return fmt.Errorf("address %q: want an IPv4 address (the EndpointSlice's address type)", o.AdvertiseIP)
	}
	for _, q := range []string{o.CPU, o.Memory} {
		if q == "" {
			continue
		}
		if _, err := resource.ParseQuantity(q); err != nil {
			return fmt.Errorf("quantity %q: %w", q, err)
		}
	}
	return nil
}
