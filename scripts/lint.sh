#!/usr/bin/env bash
# The checks every change passes: gofmt, go vet, staticcheck, and no
# function in the tree's non-test Go code over 80 lines (scripts/funclen).
#
#   scripts/lint.sh         all of them (make lint; CI runs it)
#   scripts/lint.sh quick   all but go vet and staticcheck (make test runs
#                           this beside the tests: those two analyse every
#                           package the module uses, minutes of CPU on a
#                           fresh machine; go test runs vet's main checks
#                           on every package it tests)
set -uo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
STATICCHECK=honnef.co/go/tools/cmd/staticcheck@v0.8.2
out=$(gofmt -l $(git ls-files '*.go'))
if [ -n "$out" ]; then
	echo "gofmt needed:"
	echo "$out"
	exit 1
fi
# The environment's variables are read by cmd/obsbench alone, which
# passes down what each part needs (internal/process); test helpers
# (packages named *test) read the test's.
out=$(git ls-files 'internal/*.go' | grep -v -e '_test\.go$' -e 'test/[^/]*\.go$' | xargs grep -n -E 'os\.(Getenv|LookupEnv)\b')
if [ -n "$out" ]; then
	echo "the environment read outside cmd/obsbench (give the part its value instead):"
	echo "$out"
	exit 1
fi
$GO run ./scripts/funclen || exit 1
[ "${1:-}" = quick ] && exit 0
$GO vet ./... || exit 1
$GO run $STATICCHECK ./...
