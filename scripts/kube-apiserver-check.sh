#!/usr/bin/env bash
# Checks obsbench's Kubernetes launcher against a real API server:
# builds kube-apiserver from the Go module proxy (k8s.io/kubernetes, no
# binary downloads), installs Debian's etcd if missing, starts both in a
# private temporary directory (etcd on a Unix socket there, the API
# server on loopback with a token only this script knows), runs
#   go test ./internal/fleet/kube -run TestRealAPIServer
# against it, and stops both. The build takes about 5 minutes on 2 cores
# and is cached in ~/.cache/obsbench; it is not part of the test command.
#
#   bash scripts/kube-apiserver-check.sh
set -euo pipefail

k8s=v1.37.2 # its staging modules (k8s.io/api, ...) are v0.37.2
staging=v0.37.2
repo=$(cd "$(dirname "$0")/.." && pwd)
cache=${XDG_CACHE_HOME:-$HOME/.cache}/obsbench/kube-apiserver-$k8s
bin=$cache/kube-apiserver

if ! command -v etcd >/dev/null; then
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq etcd-server >/dev/null
fi
if [ ! -x "$bin" ]; then
	echo "building kube-apiserver $k8s (about 5 minutes)" >&2
	mkdir -p "$cache/src"
	cd "$cache/src"
	{
		printf 'module kubeapiserver\n\ngo 1.26\n\nrequire k8s.io/kubernetes %s\n\n' "$k8s"
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
package main

import (
	"os"

	"k8s.io/kubernetes/cmd/kube-apiserver/app"
)

func main() {
	if err := app.NewAPIServerCommand().Execute(); err != nil {
		os.Exit(1)
	}
}
EOF
	go mod tidy
	go build -o "$bin" .
	cd "$repo"
fi

tmp=$(mktemp -d /tmp/obsbench-kube-XXXXXX)
chmod 700 "$tmp"
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT

# etcd's unix URLs name a socket file "host:port" in the working
# directory: the private directory, for etcd and the API server alike.
cd "$tmp"
etcd --name check --data-dir "$tmp/etcd" \
	--listen-client-urls unix://localhost:2379 --advertise-client-urls unix://localhost:2379 \
	--listen-peer-urls unix://localhost:2380 --initial-advertise-peer-urls unix://localhost:2380 \
	--initial-cluster check=unix://localhost:2380 >"$tmp/etcd.log" 2>&1 &
pids+=($!)

openssl genrsa -out sa.key 2048 2>/dev/null
openssl rsa -in sa.key -pubout -out sa.pub 2>/dev/null
token=$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')
echo "$token,admin,admin,system:masters" >tokens.csv
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$bin" --etcd-servers unix://localhost:2379 --bind-address 127.0.0.1 --advertise-address 127.0.0.1 \
	--secure-port "$port" --cert-dir "$tmp/certs" --token-auth-file "$tmp/tokens.csv" --authorization-mode RBAC \
	--service-account-issuer https://kubernetes.default.svc --service-account-key-file "$tmp/sa.pub" \
	--service-account-signing-key-file "$tmp/sa.key" --service-cluster-ip-range 10.96.0.0/24 --endpoint-reconciler-type none >"$tmp/apiserver.log" 2>&1 &
pids+=($!)

cat >kubeconfig <<EOF
apiVersion: v1
kind: Config
clusters:
- name: check
  cluster: {server: "https://127.0.0.1:$port", insecure-skip-tls-verify: true}
users:
- name: admin
  user: {token: "$token"}
contexts:
- name: check
  context: {cluster: check, user: admin}
current-context: check
EOF

for i in $(seq 120); do
	if curl -sk -H "Authorization: Bearer $token" "https://127.0.0.1:$port/readyz" | grep -q '^ok$'; then
		break
	fi
	if [ "$i" = 120 ]; then
		echo "kube-apiserver not ready after 60 s:" >&2
		tail -20 "$tmp/apiserver.log" >&2
		exit 1
	fi
	sleep 0.5
done
echo "kube-apiserver $k8s ready on 127.0.0.1:$port (etcd $(etcd --version | head -1 | awk '{print $3}'))" >&2

cd "$repo"
OBSBENCH_TEST_KUBECONFIG=$tmp/kubeconfig go test -count=1 -run TestRealAPIServer -v ./internal/fleet/kube
