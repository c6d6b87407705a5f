#!/usr/bin/env bash
# The checks every change passes: gofmt, go vet, staticcheck, and no
# function in the tree's non-test Go code over 80 lines (scripts/funclen)
# (make lint; make test runs it beside the tests).
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
$GO vet ./... || exit 1
$GO run ./scripts/funclen || exit 1
$GO run $STATICCHECK ./...
