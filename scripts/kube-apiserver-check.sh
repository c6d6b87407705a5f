#!/usr/bin/env bash
# Checks obsbench's Kubernetes launcher against a lone real API server:
# takes kube-apiserver from scripts/kube-node.sh's build (k8s.io/kubernetes
# from the Go module proxy, no binary downloads), installs Debian's etcd if
# missing, starts both in a
# private temporary directory (etcd on a Unix socket there, the API
# server on loopback with a token only this script knows), runs
#   go test ./internal/fleet/kube -run TestRealAPIServer
# against it, and stops both. The build is cached in ~/.cache/obsbench;
# this check is not part of the test command (make kube-check runs a
# whole node).
#
#   bash scripts/kube-apiserver-check.sh
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
# The API server of scripts/kube-node.sh's build (one binary of the
# Kubernetes components, built from the Go module proxy and cached).
kube=$(bash "$repo/scripts/kube-node.sh" build)
k8s=${kube%/kube}
k8s=${k8s##*/kube-node-} # the version is in the cache's directory name

if ! command -v etcd >/dev/null; then
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq etcd-server >/dev/null
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
"$kube" kube-apiserver --etcd-servers unix://localhost:2379 --bind-address 127.0.0.1 --advertise-address 127.0.0.1 \
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
