# The two commands of the README:
#   make demo   install what is missing, build, run the default experiment
#   make test   install what is missing, check and run every test
GO          ?= go
BIN         := bin/obsbench
VERSION     := $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)

.PHONY: demo test deps deps-demo build lint kube-check

demo: deps-demo build
	./$(BIN) run

# scripts/test.sh is scripts/lint.sh's quick checks (gofmt, function
# length; make lint adds go vet and staticcheck) and go test ./... with
# cmd/obsbench's end-to-end tests (most of the time on a 2-core machine)
# run several at a time, each in a process of its own.
test: deps
	@GO=$(GO) ./scripts/test.sh

deps:
	@./scripts/install-deps.sh

# deps-demo installs only what the default experiment needs.
deps-demo:
	@./scripts/install-deps.sh demo

build:
	$(GO) build -ldflags "-X main.version=$(VERSION)" -o $(BIN) ./cmd/obsbench

lint:
	@GO=$(GO) ./scripts/lint.sh

# kube-check starts a single-node Kubernetes cluster on this machine
# (scripts/kube-node.sh: built from the Go module proxy on first use, about
# 15 minutes, cached), runs the tests that need it inside the node's
# network namespace, and stops the node whatever they did.
kube-check:
	@./scripts/kube-node.sh up
	@./scripts/kube-node.sh run env OBSBENCH_KUBE_NODE=/run/obsbench-kube \
		$(GO) test -count=1 -v -run 'TestKubeNode' ./cmd/obsbench; s=$$?; ./scripts/kube-node.sh down; exit $$s
