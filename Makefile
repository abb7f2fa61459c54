# wafbench — the two entry points a fresh Debian 12 x86_64 machine needs:
#   make bench   set up everything, then run the default (seed) suite
#   make test    set up everything, then run every test
# Every target installs what it needs through scripts/setup.sh (idempotent).

GO        ?= go
BUILD     := build
WAFBENCH  := $(BUILD)/wafbench
MODULES   := $(BUILD)/filters/libwafbench_modsecurity.so $(BUILD)/filters/libwafbench_coraza.so
CADDY     := $(BUILD)/caddy-coraza/caddy
HTTPBIN   := $(BUILD)/go-httpbin/go-httpbin
SUITE     ?= seed
RUN_FLAGS ?=

.PHONY: all setup build modules crs bench keep rerender quick overhead matchlog-cost test test-go test-cc asan fuzz lint lint-ci clean FORCE \
	engines pgo test-builds caddy httpbin screenshot crs-test

all: build modules

setup: $(BUILD)/.setup-done

$(BUILD)/.setup-done: scripts/setup.sh go.mod
	./scripts/setup.sh
	@mkdir -p $(BUILD) && touch $@
	@# build/ holds engine sources (libmodsecurity ships Go files): a module
	@# of its own keeps it out of `go build/vet/test ./...`.
	@printf 'module wafbench/build\n' > $(BUILD)/go.mod

build: setup
	$(GO) build -o $(WAFBENCH) ./driver/cmd/wafbench

# The default build of each engine: the module objects and test binaries in
# build/filters (C++ unit tests, engine benchmarks) and the modules the driver
# loads, with manifests, in build/engines/<engine>/ (filters/builds.yaml).
modules: build $(CADDY) $(HTTPBIN)
	$(MAKE) -C filters/modsecurity
	$(MAKE) -C filters/meter
	$(MAKE) -C filters/coraza build
	$(MAKE) -C filters/coraza wasm
	$(MAKE) -C filters/extproc
	$(WAFBENCH) build modsecurity coraza

# ref-caddy-coraza: Caddy with our coraza/v3 handler, a Go module of its own
# (filters/caddy-coraza/go.mod) that uses the root module's engine package;
# relinked only when its sources, the engine's or the go.mod/go.sum change.
CADDY_SRC := $(shell find filters/caddy-coraza filters/coraza/engine internal/rulefiles -name '*.go' -o -name 'go.mod' -o -name 'go.sum') go.mod
caddy: $(CADDY)
$(CADDY): $(CADDY_SRC) | setup
	cd filters/caddy-coraza && $(GO) build -o $(CURDIR)/$@ .

# --upstream go-httpbin: the lab's upstream, a Go module of its own
# (driver/upstream/httpbin/go.mod).
httpbin: $(HTTPBIN)
$(HTTPBIN): $(wildcard driver/upstream/httpbin/*.go) driver/upstream/httpbin/go.mod driver/upstream/httpbin/go.sum | setup
	cd driver/upstream/httpbin && $(GO) build -o $(CURDIR)/$@ .

crs: build
	$(WAFBENCH) crs --out $(BUILD)/crs

# Runs go to runs/<UTC>-<name>/ (git-ignored); `make keep RUN=runs/<dir>`
# writes a run's lean form into results/ for committing.
bench: build modules crs
	$(WAFBENCH) run --suite $(SUITE) $(RUN_FLAGS)

keep: build
	@test -n "$(RUN)" || { echo "make keep: want RUN=runs/<dir>" >&2; exit 2; }
	$(WAFBENCH) keep $(RUN)

# Re-render every committed run's report with today's code from its raw
# files (driver/keep's TestCommittedRunsRebuild holds them in step).
rerender: build
	$(WAFBENCH) keep --rerender $(sort $(patsubst %/,%,$(dir $(wildcard results/*/raw.jsonl results/*/raw.jsonl.gz))))

quick: SUITE = quick
quick: bench

# PNGs of one run's report and charts for docs/reading-a-report.md (scripts/screenshot.sh):
# make screenshot RUN=results/<dir> (or runs/<dir>) writes docs/screenshots/*.png.
screenshot:
	@test -n "$(RUN)" || { echo "make screenshot: want RUN=results/<dir>" >&2; exit 2; }
	./scripts/screenshot.sh $(RUN)

# Integration overhead: modes on headers@16 and json_4k@1 plus the in-process
# engine benchmarks pinned to the Envoy CPU (scripts/overhead.sh builds what
# it needs). OVERHEAD_REPEATS repeats (default 3).
OVERHEAD_REPEATS ?= 3
overhead:
	./scripts/overhead.sh $(OVERHEAD_REPEATS)

# match_log off against match_log compiled out (the match log's
# promise: the reporting path costs nothing when off): both modules as their Makefiles build them, with
# the switch and without it (-DWAFBENCH_NO_MATCH_LOG, tag
# wafbench_nomatchlog, into build/variants/nomatchlog), counted by
# run --callgrind on the same workloads, then scripts/matchlogcost compares
# the instructions per request inside the hooks and fails past its bound.
# About 30-60 min on a shared 2-CPU machine (Envoy starts under valgrind in
# minutes), so not part of make test. MATCHLOG_FLAGS adds run flags.
MATCHLOG_FLAGS ?= --repeats 2 --callgrind 10 --callgrind-warmup 5
MATCHLOG_RUN   := $(WAFBENCH) run --suite seed --modes modsecurity,coraza --workloads headers@1,blocked_sqli@1 \
	--crs-test none --progress never $(MATCHLOG_FLAGS)
matchlog-cost: build modules crs
	$(MAKE) -C filters/modsecurity nomatchlog
	$(MAKE) -C filters/coraza nomatchlog
	$(MATCHLOG_RUN) --module-dir $(BUILD)/filters --name matchlog-off | tee $(BUILD)/matchlog-off.txt
	$(MATCHLOG_RUN) --module-dir $(BUILD)/variants/nomatchlog --name matchlog-compiled-out | tee $(BUILD)/matchlog-compiled-out.txt
	$(GO) run ./scripts/matchlogcost $$(sed -n 's/^results: //p' $(BUILD)/matchlog-off.txt) $$(sed -n 's/^results: //p' $(BUILD)/matchlog-compiled-out.txt)

# Every test in the tree, and the checks: the C++ unit tests (plain, ASan +
# UBSan, TSan), the C++ fuzz target on its seeds, the module export checks,
# the ABI header check, the driver-free end-to-end check of the Coraza
# module (filters/coraza e2e), go vet, gofmt, the CI lint, buildifier on the
# Bazel files (bazel/lint.sh), every Go test of every module with the tags
# below (filters/modsecurity/bench's cgo engine tests need
# modsecurity_engine), and every Go benchmark once (-benchtime 1x: a
# benchmark that checks verdicts must still pass them). scripts/ci/testgates
# fails when a test needs more than this (a build tag not in TEST_TAGS, a
# skip, an env-var gate, a module not in TEST_MODULES). gotestsum prints one
# line per test and a closing summary.
TEST_TAGS    := modsecurity_engine
TEST_MODULES := . filters/caddy-coraza driver/upstream/httpbin
BENCH_PKGS    = $(sort $(dir $(shell grep -rl --include='*_test.go' '^func Benchmark' driver filters internal tests)))
test: build modules crs
	$(MAKE) -C filters/modsecurity test asan tsan fuzz-seeds check-exports format-check
	$(MAKE) -C filters/coraza symbols e2e wasm-testpanic
	$(MAKE) -C filters/meter format-check
	./filters/abi/check.sh
	$(GO) run ./scripts/ci/testgates -tags '$(TEST_TAGS)' -modules '$(TEST_MODULES)' .
	$(GO) vet -tags '$(TEST_TAGS)' ./...
	cd filters/caddy-coraza && $(GO) vet ./... && $(GO) test -count=1 ./...
	cd driver/upstream/httpbin && $(GO) vet ./... && $(GO) test -count=1 ./...
	@test -z "$$(gofmt -l driver filters internal scripts tests)" || { echo "gofmt needed:"; gofmt -l driver filters internal scripts tests; exit 1; }
	./scripts/ci/lint.sh
	./bazel/lint.sh
	$(MAKE) crs-test
	$(GO) test -tags '$(TEST_TAGS)' -count=1 -run '^$$' -bench . -benchtime 1x $(addprefix ./,$(BENCH_PKGS))
	WAFBENCH_BIN=$(CURDIR)/$(WAFBENCH) $(GO) tool gotestsum --format testname -- -tags '$(TEST_TAGS)' -count=1 -timeout 20m ./...

# The CRS 4.25.0 regression suite through the default modes (make test) or
# every build and host (make test-builds), with driver/conformance/overrides.yaml
# as the expectation: an unexplained failure exits 1.
CRS_TEST_MODES ?= modsecurity,coraza
crs-test: build modules crs
	$(WAFBENCH) crs-test --modes $(CRS_TEST_MODES) --results $(BUILD)/crs-test --progress never

# The workflows pass actionlint (shellcheck on their run: steps) and the
# scripts/ci job scripts pass shellcheck; part of make test.
lint-ci: setup
	./scripts/ci/lint.sh

# Engine builds (filters/builds.yaml) into build/engines/<engine>[-<name>]/,
# each with manifest.json; unchanged recipes are not rebuilt. Builds from
# source take minutes each, so they are not part of `make test`.
# PGO_PROFILE_DIR=<dir> (a profile artifact of the pgo workflow, its pgo/
# folder): import the profiles it holds into build/pgo/ first, each checked
# against its build's recipe (engine source, instrumented build, training).
PGO_PROFILE_DIR ?=
engines: build
	$(if $(PGO_PROFILE_DIR),$(WAFBENCH) pgo --import $(PGO_PROFILE_DIR))
	$(WAFBENCH) build

# PGO loop: build the instrumented builds, train them with the `train` suite
# in Envoy, merge the profiles into build/pgo/, build the pgo builds.
pgo: build crs
	$(WAFBENCH) pgo

# Every recipe and the PGO loop (which builds the instrumented builds), then
# the Envoy end-to-end tests on every build (scripts/engines/test-builds.sh).
test-builds: build modules crs
	$(WAFBENCH) build
	$(WAFBENCH) pgo
	./scripts/engines/test-builds.sh
	$(MAKE) crs-test CRS_TEST_MODES=all

asan: setup
	$(MAKE) -C filters/modsecurity asan

# Runs the Go request-mapping fuzzer of the Coraza module (not part of CI).
FUZZTIME ?= 2m
fuzz: setup
	$(GO) test -run '^$$' -fuzz FuzzMapRequest -fuzztime $(FUZZTIME) ./filters/coraza/engine

clean:
	rm -rf $(BUILD)
