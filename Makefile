# kopf-go: Kopf for Go. `make demo` shows it end to end; `make test` runs
# every test. Both work on a fresh machine with Go: everything else (etcd,
# kube-apiserver, kube-controller-manager, kube-scheduler, kwok, kopf-gen)
# is built here from the Go module proxy, except the Debian packages of the
# real Python Kopf that `make test` runs too (python-kopf below).

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c

GO            ?= go
K8S_VERSION   := 1.35.4
GOOS          := $(shell $(GO) env GOOS)
GOARCH        := $(shell $(GO) env GOARCH)
# Where envtest looks for binaries (setup-envtest's layout), so existing
# envtest users can point KUBEBUILDER_ASSETS here and the other way round.
ASSETS        := $(CURDIR)/bin/k8s/$(K8S_VERSION)-$(GOOS)-$(GOARCH)
export KUBEBUILDER_ASSETS ?= $(ASSETS)
# Kubernetes with sharded list and watch (KEP-5866, alpha in 1.36): its kube-apiserver,
# beside $(ASSETS)'s etcd, for e2e/shardserver, which starts it with the ShardedListAndWatch gate on.
K8S_SHARDED_VERSION := 1.36.3
SHARDED_ASSETS := $(CURDIR)/bin/k8s/$(K8S_SHARDED_VERSION)-$(GOOS)-$(GOARCH)
export KOPF_SHARDED_ASSETS ?= $(SHARDED_ASSETS)
# Modules of this repository: the runtime (the root), the generator and
# kopf-gen (modules of their own, so that an operator requires the runtime
# only), the public control-plane helper for tests (envtest), the
# end-to-end kit, the examples, the benchmark. UNIT_MODULES are those whose
# tests need no control plane.
MODULES       := . generator cmd/kopf-gen envtest e2e examples bench
UNIT_MODULES  := . generator cmd/kopf-gen
TEST_TIMEOUT  ?= 20m
# kopf-gen's flags for examples/: the DeepCopy methods and the typed clients
# of examples/apis (its //go:generate line says the same from its directory).
EXAMPLES_GEN_FLAGS := --deepcopy --clients=generated
# The memcached example also generates its manifests (its CRD and role), from it and its API.
MEMCACHED_GEN_ARGS := --deepcopy --manifests=memcached/config ./memcached ./apis/cache/v1alpha1
# The e2e tests' operator written with markers, and its flags (its //go:generate line says the same).
E2E_GEN_DIR   := e2e/workloads/internal/deployop
E2E_GEN_FLAGS := --deepcopy --manifests=config
# The example of versioned APIs also generates its CRD (both versions, the conversion webhook) and role.
VERSIONS_GEN := cd examples/versions && $(CURDIR)/bin/kopf-gen
VERSIONS_GEN_ARGS := --deepcopy --manifests=config --role-name=versions-operator . ../apis/greetings/...
CLUSTER_DIR   := $(CURDIR)/.cache/cluster
# `make cluster CLUSTER_FLAGS=-controllers`: with controllers, a scheduler and a simulated node.
CLUSTER_FLAGS ?=

.PHONY: all demo test unit e2e lint verify go-min generate controlplane apiserver kopf-gen cluster cluster-down clean

all: kopf-gen

## demo: build what is needed, run examples/01-minimal on a local control plane, show its effect.
demo: apiserver kopf-gen
	cd examples && $(CURDIR)/bin/kopf-gen generate ./01-minimal
	cd examples && $(GO) build -o $(CURDIR)/bin/examples/01-minimal ./01-minimal
	cd e2e && $(GO) run ./cmd/demo -operator $(CURDIR)/bin/examples/01-minimal \
		-crd $(CURDIR)/examples/crd.yaml -object $(CURDIR)/examples/obj.yaml

## test: every test: static checks, generated code is current, unit, generator and end-to-end tests.
## The static checks then the unit stage (CPU: lint, verify and go-min compile every module, the unit
## stage's longest packages build and type-check operators), and the end-to-end stage (the longest,
## mostly waiting on control planes and operators' timing) run side by side, the output of each of their
## commands printed whole when it ends: on 2 cores that takes minutes off the serial sum (TEST_SERIAL=1 runs them in turn).
test: python-kopf controlplane kopf-gen
ifdef TEST_SERIAL
	$(MAKE) --no-print-directory static-unit e2e
else
	$(MAKE) --no-print-directory -j2 --output-sync=line static-unit e2e
endif

## static-unit: lint, verify, go-min, then unit, one at a time: make test's job beside e2e, which
## starts at once instead of after the static checks (~100 s on 2 idle cores in a fresh clone). A
## failing check fails make test when e2e ends: `make lint verify` first for a quick answer.
.PHONY: static-unit
static-unit:
	$(MAKE) --no-print-directory lint
	$(MAKE) --no-print-directory verify
	$(MAKE) --no-print-directory go-min
	$(MAKE) --no-print-directory unit

## unit: the tests of the runtime, generator and kopf-gen modules, and the fuzzers of every decoder
## of untrusted input for a while (about 4 s each on 2 busy cores, after ~5 s of start-up; a count,
## not a duration: a duration's end races the fuzzing workers in Go 1.26, golang/go#75804, and fails
## with "context deadline exceeded" on a loaded machine). Their seed corpora: testdata/fuzz/.
## FUZZ: module:package:fuzzer:inputs; go test -fuzz takes one package and one fuzzer at a time.
FUZZ := \
	generator:./markers:FuzzParse:3000 \
	.:./runtime/watching:FuzzParser:6000 \
	.:./runtime/watching:FuzzEvents:25000 \
	.:./runtime/watching:FuzzList:25000 \
	.:./runtime/admission:FuzzDecodeReview:10000 \
	.:./runtime/reactor:FuzzResourceVersionOf:3000 \
	.:./runtime/kwargs:FuzzDecode:4000 \
	.:./runtime/progress:FuzzDecodeRecord:60000 \
	.:./runtime/progress:FuzzDecodeEssence:60000 \
	.:./runtime/peering:FuzzParse:2000
## The runtime's tests run with the race detector (the runtime is concurrent); the generator's and
## kopf-gen's without it: their code runs on one goroutine, and under the detector their in-process
## type-checking of operators is several times slower (the generator's package passed 10 minutes
## beside the end-to-end stage).
RACE_MODULES := .
unit:
	for m in $(UNIT_MODULES); do race=; case " $(RACE_MODULES) " in *" $$m "*) race=-race;; esac; \
		(cd $$m && $(GO) test $$race -count=1 -timeout $(TEST_TIMEOUT) ./...); done
	for f in $(FUZZ); do IFS=: read -r mod pkg fuzzer n <<< "$$f"; \
		(cd $$mod && $(GO) test -run '^$$' -fuzz "^$$fuzzer\$$" -fuzztime "$${n}x" "$$pkg"); done

## E2E_FIRST: the e2e packages that go test starts first (it starts them in the order given, two at
## a time): the longest, so that none of them is left to run alone at the end; e2e/sharding the last of
## them, once the static checks (static-unit) are over.
E2E_FIRST := scaffold release deployed partition sharding
e2e: controlplane python-kopf
	cd envtest && $(GO) test -count=1 -timeout $(TEST_TIMEOUT) ./...
	cd e2e && $(GO) test -count=1 -timeout $(TEST_TIMEOUT) $(addprefix ./,$(E2E_FIRST)) \
		$$($(GO) list ./... | grep -vxF $(addprefix -e github.com/kopf-go/kopf/e2e/,$(E2E_FIRST)))
	cd examples && $(GO) test -count=1 -timeout $(TEST_TIMEOUT) ./...

## python-kopf: Debian 12's python3 has the packages that Kopf 1.44.6 needs (../shared/kopf-1.44.6/README.md),
## for e2e/peering's tests of a real Python Kopf beside kopf-go. Without them those tests skip, and fail
## under CI (CI=true, as .ci/run sets it, which installs them): here too.
KOPF_PYTHON ?= /usr/bin/python3
KOPF_DEBS   := python3-aiohttp python3-click python3-yaml python3-typing-extensions python3-iso8601 python3-jsonpatch python3-pythonjsonlogger
.PHONY: python-kopf
python-kopf:
	@$(KOPF_PYTHON) -c 'import aiohttp, click, yaml, typing_extensions, iso8601, jsonpatch, pythonjsonlogger' 2>/dev/null || { \
		echo "The tests of a real Python Kopf (e2e/peering) need Debian 12's python3 ($(KOPF_PYTHON)) with:"; \
		echo "    apt-get update && apt-get install -y $(KOPF_DEBS)"; \
		if [ "$${CI:-}" = true ]; then echo "Under CI they fail without them."; exit 1; fi; \
		echo "Without them they skip (under CI they fail)."; }

# kopf-debs: the list above, for .ci/run's apt-get (one list).
.PHONY: kopf-debs
kopf-debs:
	@echo $(KOPF_DEBS)

## lint: gofmt, go vet and a tidy go.mod in every module.
lint:
	@bad=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$bad" ]; then echo "gofmt -l lists: $$bad"; exit 1; fi
	for m in $(MODULES); do (cd $$m && $(GO) vet ./... && $(GO) mod tidy -diff); done

## verify: fail if any generated file in examples/ (or of e2e's operator with markers) is stale, missing or orphaned.
verify: kopf-gen
	cd examples && $(CURDIR)/bin/kopf-gen verify $(EXAMPLES_GEN_FLAGS) ./...
	cd examples && $(CURDIR)/bin/kopf-gen verify $(MEMCACHED_GEN_ARGS)
	cd $(E2E_GEN_DIR) && $(CURDIR)/bin/kopf-gen verify $(E2E_GEN_FLAGS)
	$(VERSIONS_GEN) verify $(VERSIONS_GEN_ARGS)

## go-min: the examples compile at the runtime's minimum Go, the root go.mod's go directive (an
## operator's go.mod may declare no newer): generated code must not use newer language features.
GO_MIN := $(shell sed -n 's/^go \([0-9]*\.[0-9]*\).*/\1/p' go.mod)
go-min:
	cd examples && $(GO) build -gcflags='github.com/kopf-go/kopf/examples/...=-lang=go$(GO_MIN)' ./...

## generate: regenerate the examples' code (and that of e2e's operator with markers).
generate: kopf-gen
	cd examples && $(CURDIR)/bin/kopf-gen generate $(EXAMPLES_GEN_FLAGS) ./...
	cd examples && $(CURDIR)/bin/kopf-gen generate $(MEMCACHED_GEN_ARGS)
	cd $(E2E_GEN_DIR) && $(CURDIR)/bin/kopf-gen generate $(E2E_GEN_FLAGS)
	$(VERSIONS_GEN) generate $(VERSIONS_GEN_ARGS)

## kopf-gen: build kopf-gen from its module (cmd/kopf-gen/go.mod) into bin/.
kopf-gen:
	cd cmd/kopf-gen && $(GO) build -o $(CURDIR)/bin/kopf-gen .

## controlplane: build etcd, kube-apiserver, kube-controller-manager, kube-scheduler and kwok
## from the Go module proxy into $(ASSETS), with `kopf-gen envtest --controllers`, as users do
## (once: it builds nothing when all five binaries are there; envtest.WithControllers uses the last three).
controlplane: kopf-gen
	$(CURDIR)/bin/kopf-gen envtest --controllers --kubernetes-version $(K8S_VERSION) --bin-dir $(CURDIR)/bin/k8s >/dev/null
	$(MAKE) --no-print-directory sharded-apiserver

## sharded-apiserver: kube-apiserver $(K8S_SHARDED_VERSION) into $(SHARDED_ASSETS), with $(ASSETS)'s etcd
## (etcd 3.6, as 1.36 requires): about 15 minutes of CPU the first time, nothing once it is there.
.PHONY: sharded-apiserver
sharded-apiserver: kopf-gen
	@mkdir -p $(SHARDED_ASSETS) && { [ -e $(SHARDED_ASSETS)/etcd ] || cp $(ASSETS)/etcd $(SHARDED_ASSETS)/etcd; }
	$(CURDIR)/bin/kopf-gen envtest --kubernetes-version $(K8S_SHARDED_VERSION) --bin-dir $(CURDIR)/bin/k8s >/dev/null

## apiserver: only etcd and kube-apiserver (what `make demo` needs; minutes less on a fresh machine).
apiserver: kopf-gen
	$(CURDIR)/bin/kopf-gen envtest --kubernetes-version $(K8S_VERSION) --bin-dir $(CURDIR)/bin/k8s >/dev/null

## cluster: start a local control plane in the background; kubeconfig in .cache/cluster/kubeconfig.
cluster: controlplane
	@mkdir -p $(CLUSTER_DIR)
	cd e2e && $(GO) build -o $(CURDIR)/bin/cluster ./cmd/cluster
	@if [ -f $(CLUSTER_DIR)/pid ] && kill -0 $$(cat $(CLUSTER_DIR)/pid) 2>/dev/null; then \
		echo "The cluster is already running (pid $$(cat $(CLUSTER_DIR)/pid))."; exit 0; fi; \
	nohup $(CURDIR)/bin/cluster -kubeconfig $(CLUSTER_DIR)/kubeconfig $(CLUSTER_FLAGS) > $(CLUSTER_DIR)/log 2>&1 & \
	echo $$! > $(CLUSTER_DIR)/pid; \
	for i in $$(seq 1 120); do [ -f $(CLUSTER_DIR)/kubeconfig ] && break; \
		kill -0 $$(cat $(CLUSTER_DIR)/pid) 2>/dev/null || { cat $(CLUSTER_DIR)/log; exit 1; }; sleep 1; done; \
	cat $(CLUSTER_DIR)/log; \
	echo "export KUBECONFIG=$(CLUSTER_DIR)/kubeconfig"

## cluster-down: stop the local control plane started by `make cluster`.
cluster-down:
	@if [ -f $(CLUSTER_DIR)/pid ]; then pid=$$(cat $(CLUSTER_DIR)/pid); \
		kill $$pid 2>/dev/null || true; \
		for i in $$(seq 1 60); do kill -0 $$pid 2>/dev/null || break; sleep 0.5; done; \
		rm -f $(CLUSTER_DIR)/pid; echo "The cluster is stopped."; \
	else echo "No cluster is running."; fi

clean:
	rm -rf bin .cache

## bench: issue #5's benchmark of kopf-go against a client-go ceiling and controller-runtime on a
## local control plane; writes bench/RESULTS.md and bench/results.png. BENCH_N=1000 for a quick pass.
BENCH_N     ?= 1000,10000
BENCH_FLAGS ?=
.PHONY: bench
bench: controlplane
	cd bench && $(GO) build -o $(CURDIR)/bin/bench/ ./cmd/bench ./operators/...
	cd bench && $(CURDIR)/bin/bench/bench -bin $(CURDIR)/bin/bench -n $(BENCH_N) \
		-out $(CURDIR)/bench -work $(CURDIR)/.cache/bench $(BENCH_FLAGS)

## chaos: issue #9's chaos campaign (minutes long; `make test` runs a small one, e2e/chaos TestCampaign):
## 1,000 objects with three handlers each, the operator SIGKILLed 50 times, kube-apiserver restarted 5
## times and paused 5 times past the watch timeout; see docs/chaos.md.
## CHAOS_FLAGS="-n 50 -plain 20 -kills 5 -restarts 1 -pauses 1" for a quick pass, "-seed N" to repeat a schedule;
## CHAOS_BUILD_FLAGS=-race builds the operator with the race detector.
CHAOS_FLAGS       ?=
CHAOS_BUILD_FLAGS ?=
.PHONY: chaos
chaos: controlplane
	cd e2e && $(GO) build -o $(CURDIR)/bin/chaos/ ./cmd/chaos
	cd e2e && $(GO) build $(CHAOS_BUILD_FLAGS) -o $(CURDIR)/bin/chaos/operator ./cmd/chaos/operator
	$(CURDIR)/bin/chaos/chaos -operator $(CURDIR)/bin/chaos/operator -work $(CURDIR)/.cache/chaos $(CHAOS_FLAGS)

## release-check: rehearse a release (docs/releasing.md): the published modules at RELEASE_VERSION in
## a file-based module proxy, then as a user: go install kopf-gen@RELEASE_VERSION, kopf-gen init
## without --kopf-replace, the scaffold's make lint test build test-e2e, with the go command's module
## cache less kopf-go's own modules (removed before and after). Alone and cold it downloads and compiles
## the dependencies (~10 min on 2 cores), later runs take ~50 s. `make e2e` runs it too (e2e/release's TestRelease).
RELEASE_VERSION ?= v0.1.0
.PHONY: release-check
release-check: controlplane
	cd e2e && KOPF_RELEASE_VERSION=$(RELEASE_VERSION) $(GO) test -count=1 -timeout $(TEST_TIMEOUT) -v -run '^TestRelease$$' ./release/

.PHONY: port-check
## port-check: kopf-gen port on Kopf's 17 examples from a Kopf checkout (KOPF_GIT, KOPF_TAG; not part of test): decorators, builds, statements translated.
port-check:
	PYTHON=$${PYTHON:-python3} hack/port-check.sh $(or $(KOPF_GIT),/work/.mirror/nolar+kopf/repo) $(or $(KOPF_TAG),1.44.6)

.PHONY: port-expectations
## port-expectations: Kopf's e2e expectations (tests/e2e/test_examples.py) on kopf-gen port's output of the Kopf examples
## that translate fully, run against envtest (e2e/port's TestKopfExamplesExpectations; KOPF_GIT, KOPF_TAG; not part of test).
port-expectations: controlplane
	cd e2e && KOPF_EXAMPLES_GIT=$(or $(KOPF_GIT),/work/.mirror/nolar+kopf/repo) KOPF_EXAMPLES_TAG=$(or $(KOPF_TAG),1.44.6) \
		$(GO) test -tags kopfexamples -count=1 -timeout $(TEST_TIMEOUT) -v -run '^TestKopfExamplesExpectations$$' ./port/
