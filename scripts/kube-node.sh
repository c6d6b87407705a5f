#!/usr/bin/env bash
# A single-node Kubernetes cluster on this machine, for running obsbench's
# worker pods for real (--launcher kubernetes):
#
#   bash scripts/kube-node.sh up     # start it (builds on first use)
#   bash scripts/kube-node.sh down   # stop it; nothing left running or mounted
#   bash scripts/kube-node.sh image  # rebuild obsbench's image from this checkout
#   bash scripts/kube-node.sh build  # only build the components (their binary's path)
#   bash scripts/kube-node.sh run CMD...   # run CMD inside the node's network
#
# Everything runs in a network namespace of its own (obsbench-kube), so no
# other account on the machine reaches the API server, the pods or a
# database server started for them: etcd on a Unix socket, kube-apiserver,
# kube-controller-manager, kube-scheduler, kube-proxy (iptables), a kubelet
# with Debian's containerd and runc, the CNI bridge plugin (pods on
# 10.244.0.0/24, the node at 10.244.0.1), and CoreDNS for cluster.local.
# The Kubernetes components and CoreDNS are built from the Go module proxy
# (no binary downloads, about 15 minutes on 2 cores, cached in
# ~/.cache/obsbench); no image is pulled: the obsbench image (the static
# binary, user 65532) and the pod sandbox image are built here and
# imported into containerd. RBAC from deploy/kubernetes/rbac.yaml is
# applied in namespace perf.
#
# Kubernetes v1.35 is the newest release whose kubelet still runs on
# containerd 1.x (Debian 12 has 1.6) and on cgroup v1 (with
# failCgroupV1: false).
set -Eeuo pipefail

k8s=v1.35.4 # its staging modules (k8s.io/api, ...) are v0.35.4
staging=v0.35.4
coredns=v1.15.0
repo=$(cd "$(dirname "$0")/.." && pwd)
cache=${XDG_CACHE_HOME:-$HOME/.cache}/obsbench/kube-node-$k8s
kube=$cache/kube
ns=obsbench-kube
state=/run/obsbench-kube
data=/var/lib/obsbench-kube
node=obsbench-node
gw=10.244.0.1
image=obsbench.local/obsbench:dev
pause=obsbench.local/pause:1

in_ns() { nsenter --net=/run/netns/$ns "$@"; }
kubectl() { in_ns "$kube" kubectl --kubeconfig "$state/admin.kubeconfig" "$@"; }
ctr_() { ctr --address "$state/containerd.sock" --namespace k8s.io "$@"; }

install_deps() {
	local missing=()
	for p in etcd-server containerd runc containernetworking-plugins umoci iptables openssl; do
		dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
	done
	if [ ${#missing[@]} -gt 0 ]; then
		apt-get update -qq
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
	fi
}

# build_kube builds the components as one binary whose first argument
# names the component.
build_kube() {
	[ -x "$kube" ] && return
	echo "building Kubernetes $k8s components (about 12 minutes)" >&2
	mkdir -p "$cache/src"
	cd "$cache/src"
	{
		printf 'module kubenode\n\ngo 1.26\n\nrequire k8s.io/kubernetes %s\n\n' "$k8s"
		# k8s.io/kubernetes requires its staging modules at v0.0.0 and
		# replaces them with its own directories, which a dependent module
		# does not see: replace them with their published versions.
		for m in api apiextensions-apiserver apimachinery apiserver cli-runtime client-go cloud-provider \
			cluster-bootstrap code-generator component-base component-helpers controller-manager cri-api \
			cri-client cri-streaming csi-translation-lib dynamic-resource-allocation endpointslice externaljwt \
			kms kube-aggregator kube-controller-manager kube-proxy kube-scheduler kubectl kubelet metrics \
			mount-utils pod-security-admission sample-apiserver streaming; do
			printf 'replace k8s.io/%s => k8s.io/%s %s\n' "$m" "$m" "$staging"
		done
	} >go.mod
	cat >main.go <<'EOF'
// kube is kube-apiserver, kube-controller-manager, kube-scheduler,
// kubelet, kube-proxy and kubectl in one binary: the first argument
// names the component.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"k8s.io/component-base/cli"
	_ "k8s.io/component-base/metrics/prometheus/clientgo"
	_ "k8s.io/component-base/metrics/prometheus/version"
	kubectl "k8s.io/kubectl/pkg/cmd"
	apiserver "k8s.io/kubernetes/cmd/kube-apiserver/app"
	controllermanager "k8s.io/kubernetes/cmd/kube-controller-manager/app"
	proxy "k8s.io/kubernetes/cmd/kube-proxy/app"
	scheduler "k8s.io/kubernetes/cmd/kube-scheduler/app"
	kubelet "k8s.io/kubernetes/cmd/kubelet/app"
)

func main() {
	commands := map[string]func() *cobra.Command{
		"kube-apiserver":          apiserver.NewAPIServerCommand,
		"kube-controller-manager": controllermanager.NewControllerManagerCommand,
		"kube-scheduler":          func() *cobra.Command { return scheduler.NewSchedulerCommand() },
		"kubelet":                 func() *cobra.Command { return kubelet.NewKubeletCommand(context.Background()) },
		"kube-proxy":              proxy.NewProxyCommand,
		"kubectl":                 kubectl.NewDefaultKubectlCommand,
	}
	if len(os.Args) < 2 || commands[os.Args[1]] == nil {
		fmt.Fprintln(os.Stderr, "usage: kube kube-apiserver|kube-controller-manager|kube-scheduler|kubelet|kube-proxy|kubectl [flags]")
		os.Exit(2)
	}
	cmd := commands[os.Args[1]]()
	os.Args = append(os.Args[:1], os.Args[2:]...)
	os.Exit(cli.Run(cmd))
}
EOF
	go mod tidy
	CGO_ENABLED=0 go build -o "$kube.tmp" .
	mv "$kube.tmp" "$kube"
	cd "$repo"
}

# build_coredns builds CoreDNS with the plugins the node uses.
build_coredns() {
	[ -x "$cache/coredns" ] && return
	echo "building CoreDNS $coredns" >&2
	mkdir -p "$cache/coredns-src"
	cd "$cache/coredns-src"
	printf 'module corednsnode\n\ngo 1.26\n\nrequire github.com/coredns/coredns %s\n' "$coredns" >go.mod
	cat >main.go <<'EOF'
// coredns is CoreDNS with the kubernetes plugin and the few it needs.
package main

import (
	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/coremain"
	_ "github.com/coredns/coredns/plugin/bind"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/kubernetes"
	_ "github.com/coredns/coredns/plugin/log"
)

func main() {
	dnsserver.Directives = []string{"bind", "errors", "log", "kubernetes"}
	coremain.Run()
}
EOF
	go mod tidy
	CGO_ENABLED=0 go build -o "$cache/coredns.tmp" .
	mv "$cache/coredns.tmp" "$cache/coredns"
	cd "$repo"
}

# build_pause builds the pod sandbox's process: it waits for a signal.
build_pause() {
	[ -x "$cache/pause" ] && return
	mkdir -p "$cache/pause-src"
	cd "$cache/pause-src"
	printf 'module pause\n\ngo 1.26\n' >go.mod
	cat >main.go <<'EOF'
// pause holds a pod's namespaces until it is told to stop.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	c := make(chan os.Signal, 1)
	signal.Notify(c, syscall.SIGINT, syscall.SIGTERM)
	<-c
}
EOF
	CGO_ENABLED=0 go build -ldflags "-s -w" -o "$cache/pause" .
	cd "$repo"
}

# oci_image writes an OCI image archive of one static binary at /NAME,
# run as user 65532, and imports it into containerd as REF.
oci_image() {
	local binary=$1 ref=$2 dir tag
	tag=${ref##*:}
	dir=$(mktemp -d "$state/image-XXXXXX")
	umoci init --layout "$dir/layout"
	umoci new --image "$dir/layout:$tag"
	umoci unpack --image "$dir/layout:$tag" "$dir/bundle" >/dev/null
	cp "$binary" "$dir/bundle/rootfs/$(basename "$binary")"
	install -d -m 1777 "$dir/bundle/rootfs/tmp" # as distroless has
	umoci repack --image "$dir/layout:$tag" "$dir/bundle"
	umoci config --image "$dir/layout:$tag" --config.user 65532:65532 \
		--config.entrypoint "/$(basename "$binary")" --clear config.cmd
	(cd "$dir/layout" && tar -cf "$dir/image.tar" .)
	# An OCI archive names its image by tag alone: --base-name is the rest.
	ctr_ images import --base-name "${ref%:*}" "$dir/image.tar" >/dev/null
	rm -rf "$dir"
}

# obsbench_image builds obsbench from this checkout and imports it as
# $image, replacing the one there.
obsbench_image() {
	(cd "$repo" && CGO_ENABLED=0 go build -trimpath -ldflags "-X main.version=kube-node" -o "$state/obsbench" ./cmd/obsbench)
	ctr_ images rm "$image" >/dev/null 2>&1 || true
	oci_image "$state/obsbench" "$image"
}

certs() {
	cd "$state"
	openssl genrsa -out ca.key 2048 2>/dev/null
	openssl req -x509 -new -key ca.key -subj /CN=obsbench-kube-ca -days 2 -out ca.crt 2>/dev/null
	openssl genrsa -out apiserver.key 2048 2>/dev/null
	openssl req -new -key apiserver.key -subj /CN=kube-apiserver -out apiserver.csr 2>/dev/null
	printf 'subjectAltName=IP:127.0.0.1,IP:%s,IP:10.96.0.1,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local\n' "$gw" >san.ext
	openssl x509 -req -in apiserver.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 2 -extfile san.ext -out apiserver.crt 2>/dev/null
	# The API server's client certificate for the kubelet (logs, exec).
	openssl genrsa -out kubelet-client.key 2048 2>/dev/null
	openssl req -new -key kubelet-client.key -subj "/O=system:masters/CN=kube-apiserver-kubelet-client" -out kubelet-client.csr 2>/dev/null
	openssl x509 -req -in kubelet-client.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 2 -out kubelet-client.crt 2>/dev/null
	openssl genrsa -out sa.key 2048 2>/dev/null
	openssl rsa -in sa.key -pubout -out sa.pub 2>/dev/null
	: >tokens.csv
	local file user group token
	while read -r file user group; do
		token=$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')
		echo "$token,$user,$user${group:+,$group}" >>tokens.csv
		cat >"$file.kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: node
  cluster: {server: "https://127.0.0.1:6443", certificate-authority: "$state/ca.crt"}
users:
- name: $file
  user: {token: "$token"}
contexts:
- name: node
  context: {cluster: node, user: $file}
current-context: node
EOF
	done <<EOF
admin admin system:masters
node system:node:$node system:nodes
controller-manager system:kube-controller-manager
scheduler system:kube-scheduler
proxy system:kube-proxy
EOF
	cd "$repo"
}

# start NAME CMD... runs CMD in the node's network namespace, logging to
# $state/NAME.log, and records its pid for down.
start() {
	local name=$1
	shift
	# nsenter execs CMD: $! is CMD's pid.
	nsenter --net=/run/netns/$ns "$@" >"$state/$name.log" 2>&1 &
	echo "$! $name" >>"$state/pids"
}

wait_for() {
	local what=$1 tries=$2
	shift 2
	for _ in $(seq "$tries"); do
		if "$@" >/dev/null 2>&1; then
			return 0
		fi
		sleep 1
	done
	echo "kube-node: $what not ready after $tries s" >&2
	return 1
}

# failed keeps the logs of an up that failed, and stops what it started.
failed() {
	trap - ERR
	local logs
	logs=$(mktemp -d /tmp/obsbench-kube-logs-XXXXXX)
	cp "$state"/*.log "$logs/" 2>/dev/null || true
	echo "kube-node: up failed; the components' logs are in $logs; stopping what started" >&2
	down
	exit 1
}

up() {
	if [ -e "$state/pids" ]; then
		echo "kube-node: already up ($state); 'bash scripts/kube-node.sh down' first" >&2
		exit 1
	fi
	install_deps
	build_kube
	build_coredns
	build_pause
	mkdir -p "$state" "$data"
	chmod 700 "$state" "$data"
	trap failed ERR

	ip netns add "$ns"
	in_ns ip link set lo up
	in_ns ip link add cni0 type bridge
	in_ns ip addr add "$gw/24" dev cni0
	in_ns ip link set cni0 up
	in_ns sysctl -qw net.ipv4.ip_forward=1
	certs

	cd "$state"
	# etcd's unix URLs name a socket file "host:port" in its working
	# directory: this private one.
	start etcd etcd --name node --data-dir "$data/etcd" \
		--listen-client-urls unix://localhost:2379 --advertise-client-urls unix://localhost:2379 \
		--listen-peer-urls unix://localhost:2380 --initial-advertise-peer-urls unix://localhost:2380 \
		--initial-cluster node=unix://localhost:2380
	start kube-apiserver "$kube" kube-apiserver --etcd-servers unix://localhost:2379 \
		--bind-address 0.0.0.0 --advertise-address "$gw" --secure-port 6443 \
		--tls-cert-file apiserver.crt --tls-private-key-file apiserver.key --client-ca-file ca.crt \
		--token-auth-file tokens.csv --authorization-mode Node,RBAC \
		--service-account-issuer https://kubernetes.default.svc --service-account-key-file sa.pub \
		--service-account-signing-key-file sa.key --service-cluster-ip-range 10.96.0.0/24 \
		--kubelet-client-certificate kubelet-client.crt --kubelet-client-key kubelet-client.key \
		--kubelet-preferred-address-types InternalIP
	cd "$repo"
	wait_for kube-apiserver 90 kubectl get --raw /readyz

	start kube-controller-manager "$kube" kube-controller-manager --kubeconfig "$state/controller-manager.kubeconfig" \
		--service-account-private-key-file "$state/sa.key" --root-ca-file "$state/ca.crt" \
		--use-service-account-credentials --bind-address 127.0.0.1 --leader-elect=false
	start kube-scheduler "$kube" kube-scheduler --kubeconfig "$state/scheduler.kubeconfig" \
		--bind-address 127.0.0.1 --leader-elect=false

	mkdir -p "$state/cni"
	cat >"$state/cni/10-bridge.conflist" <<EOF
{"cniVersion": "1.0.0", "name": "obsbench-kube", "plugins": [
  {"type": "bridge", "bridge": "cni0", "isGateway": true, "ipMasq": false, "hairpinMode": true,
   "ipam": {"type": "host-local", "ranges": [[{"subnet": "10.244.0.0/24", "gateway": "$gw"}]],
            "routes": [{"dst": "0.0.0.0/0"}], "dataDir": "$data/cni"}},
  {"type": "loopback"}]}
EOF
	cat >"$state/containerd.toml" <<EOF
version = 2
root = "$data/containerd"
state = "$state/containerd"
[grpc]
  address = "$state/containerd.sock"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$pause"
  # The kubelet asks for an OOM score below containerd's own (-998 for
  # the sandbox), which needs CAP_SYS_RESOURCE: a container here lacks it
  # (runc: "failed to update /proc/self/oom_score_adj: Permission
  # denied"). Scores no lower than containerd's are kept.
  restrict_oom_score_adj = true
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$state/cni"
  [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
    runtime_type = "io.containerd.runc.v2"
EOF
	start containerd containerd --config "$state/containerd.toml"
	wait_for containerd 30 ctr_ version
	obsbench_image
	oci_image "$cache/pause" "$pause"

	echo "nameserver $gw" >"$state/resolv.conf"
	cat >"$state/kubelet.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: "$state/ca.crt"}
authorization: {mode: Webhook}
cgroupDriver: cgroupfs
failCgroupV1: false
failSwapOn: false
containerRuntimeEndpoint: "unix://$state/containerd.sock"
clusterDNS: ["$gw"]
clusterDomain: cluster.local
resolvConf: "$state/resolv.conf"
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
evictionHard: {memory.available: "100Mi", nodefs.available: "1%", imagefs.available: "1%"}
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
EOF
	start kubelet "$kube" kubelet --config "$state/kubelet.yaml" --kubeconfig "$state/node.kubeconfig" \
		--root-dir "$data/kubelet" --cert-dir "$state/kubelet-pki" --hostname-override "$node" --node-ip "$gw"
	start kube-proxy "$kube" kube-proxy --kubeconfig "$state/proxy.kubeconfig" --hostname-override "$node" \
		--cluster-cidr 10.244.0.0/24 --proxy-mode iptables --conntrack-max-per-core 0 \
		--metrics-bind-address 127.0.0.1:10249 --healthz-bind-address 127.0.0.1:10256
	cat >"$state/Corefile" <<EOF
.:53 {
  bind $gw
  errors
  kubernetes cluster.local in-addr.arpa {
    kubeconfig $state/admin.kubeconfig node
  }
}
EOF
	start coredns "$cache/coredns" -conf "$state/Corefile"

	wait_for "node $node" 120 kubectl wait --for=condition=Ready "node/$node" --timeout=1s
	kubectl create namespace perf >/dev/null
	kubectl apply -f "$repo/deploy/kubernetes/rbac.yaml" >/dev/null
	# The coordinator's kubeconfig outside the cluster: the Role's service
	# account, nothing more.
	cat >"$state/coordinator.kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: node
  cluster: {server: "https://127.0.0.1:6443", certificate-authority: "$state/ca.crt"}
users:
- name: obsbench-coordinator
  user: {token: "$(kubectl create token obsbench-coordinator -n perf --duration 48h)"}
contexts:
- name: node
  context: {cluster: node, user: obsbench-coordinator, namespace: perf}
current-context: node
EOF
	trap - ERR
	cat >&2 <<EOF
kube-node: up: node $node Ready (Kubernetes $k8s), image $image imported, RBAC applied in namespace perf
  kubeconfigs: $state/admin.kubeconfig, $state/coordinator.kubeconfig (the Role's service account),
  reachable only inside network namespace $ns:
    bash scripts/kube-node.sh run $kube kubectl --kubeconfig $state/admin.kubeconfig get pods -A
  the node's address, for --advertise and a database server the pods reach: $gw
EOF
}

down() {
	set +e
	if [ -e "$state/containerd.sock" ] && ctr_ version >/dev/null 2>&1; then
		# Pods first, while the kubelet and containerd still run.
		if [ -e "$state/admin.kubeconfig" ]; then
			kubectl delete pods --all -A --grace-period=0 --force --wait=false >/dev/null 2>&1
		fi
		for t in $(ctr_ tasks ls -q 2>/dev/null); do
			ctr_ tasks kill -s SIGKILL "$t" >/dev/null 2>&1
		done
		sleep 1
		for t in $(ctr_ tasks ls -q 2>/dev/null); do ctr_ tasks delete -f "$t" >/dev/null 2>&1; done
		for c in $(ctr_ containers ls -q 2>/dev/null); do ctr_ containers delete "$c" >/dev/null 2>&1; done
	fi
	if [ -e "$state/pids" ]; then
		tac "$state/pids" | while read -r pid name; do
			kill "$pid" 2>/dev/null && echo "stopping $name" >&2
		done
		sleep 2
		while read -r pid _; do kill -9 "$pid" 2>/dev/null; done <"$state/pids"
	fi
	pkill -9 -f "containerd-shim-runc-v2 .*-address $state/containerd.sock" 2>/dev/null
	# Mounts the kubelet and containerd made (volumes, root file systems,
	# sandbox namespaces), deepest first.
	grep -E " ($state|$data|/run/netns/cni-)" /proc/mounts | awk '{print $2}' | sort -r | while read -r m; do
		umount -l "$m" 2>/dev/null
	done
	for n in $(ip netns list 2>/dev/null | awk '/^cni-/{print $1}'); do ip netns del "$n" 2>/dev/null; done
	ip netns del "$ns" 2>/dev/null
	# ip netns add bind-mounts /run/netns on itself; with no namespace
	# left in it, that goes too.
	if [ -d /run/netns ] && [ -z "$(ls -A /run/netns)" ]; then
		umount /run/netns 2>/dev/null
	fi
	# The kubelet's cgroups, leaves first.
	for c in /sys/fs/cgroup/*/kubepods; do
		[ -d "$c" ] && find "$c" -depth -type d -exec rmdir {} \; 2>/dev/null
	done
	rm -rf "$state" "$data"
	echo "kube-node: down" >&2
}

case "${1:-}" in
up) up ;;
down) down ;;
image) obsbench_image ;;
build)
	# The components' binary, built if missing: its path on stdout.
	install_deps >&2
	build_kube >&2
	echo "$kube"
	;;
run)
	shift
	in_ns "$@"
	;;
*)
	echo "usage: bash scripts/kube-node.sh up|down|image|build|run CMD..." >&2
	exit 2
	;;
esac
