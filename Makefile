# Cuttle build, test and lint entry points. CI runs .ci/run, which calls
# `make test` and `make lint`.
#
#   make run     build bin/cuttle and start a local cluster in ./.cuttle
#                (cuttle cluster up; RUNFLAGS="--mons 3" for three monitors)
#   make stop    stop it (cuttle cluster down; data stays in ./.cuttle)
#   make build   build bin/cuttle
#   make test    install missing test tools, then run every test with the race
#                detector and invariant checks (CI=true disables the test cache),
#                then the chaos simulation for CHAOS_SEEDS seeds (200 in CI, 30
#                otherwise; without the race detector, to afford many seeds)
#   make bench   run every benchmark
#   make lint    gofmt, go vet and staticcheck
#   make fuzz    run every fuzz target for FUZZTIME each (default 10s)

GO       ?= go
BIN      := $(CURDIR)/bin
FUZZTIME ?= 10s
RUNFLAGS ?=

TESTFLAGS := -race -tags invariants -timeout 30m
CHAOS_SEEDS ?= 30
ifeq ($(CI),true)
TESTFLAGS += -count=1
CHAOS_SEEDS := 200
endif

STATICCHECK_VERSION := v0.8.2
STATICCHECK := $(BIN)/tools/staticcheck-$(STATICCHECK_VERSION)/staticcheck

# Programs the tests need beyond Go, as command:debian-package pairs. The race
# detector needs a C toolchain. Add a pair here when a test starts using a new
# tool; `make deps` installs missing ones when run as root on Debian.
TEST_TOOLS := gcc:gcc aws:awscli qemu-img:qemu-utils qemu-io:qemu-utils nbdinfo:libnbd-bin nbdcopy:libnbd-bin \
	nbdfuse:libnbd-bin mkfs.ext4:e2fsprogs fsck.ext4:e2fsprogs losetup:mount fusermount3:fuse3 fio:fio openssl:openssl \
	rclone:rclone s3cmd:s3cmd
# Python modules the tests import, as module:debian-package pairs (the S3
# gateway's boto3 client test).
TEST_PY_MODULES := boto3:python3-boto3

.PHONY: build run stop test deps bench lint fuzz

# The first build (no bin/cuttle yet) downloads the modules and compiles
# everything, silently, for a minute or two: say so before it starts.
build:
	@[ -x bin/cuttle ] || echo "building bin/cuttle: the first build downloads modules and compiles them, a minute or two..."
	$(GO) build -o bin/cuttle ./cmd/cuttle

run: build
	bin/cuttle cluster up $(RUNFLAGS)

stop: build
	bin/cuttle cluster down

# The race run goes through scripts/go-test-race.sh, which reruns once a
# package whose test binary died inside the race runtime itself (a Go 1.26
# race-runtime fault with testing/synctest, golang/go#78156), never one
# with a failing test.
test: deps
	scripts/go-test-race.sh $(GO) $(TESTFLAGS) -- ./...
	$(GO) test -tags invariants -count=1 -timeout 30m -run '^TestChaos$$' ./internal/sim -chaos.seeds $(CHAOS_SEEDS)

deps:
	@missing=""; \
	for pair in $(TEST_TOOLS); do \
		command -v "$${pair%%:*}" >/dev/null 2>&1 || missing="$$missing $${pair#*:}"; \
	done; \
	for pair in $(TEST_PY_MODULES); do \
		python3 -c "import $${pair%%:*}" >/dev/null 2>&1 || missing="$$missing $${pair#*:}"; \
	done; \
	if [ -n "$$missing" ]; then \
		if [ "$$(id -u)" = 0 ] && [ -f /etc/debian_version ]; then \
			echo "deps: installing$$missing"; \
			apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
		else \
			echo "deps: missing$$missing; install them (or run make test as root on Debian)" >&2; \
			exit 1; \
		fi; \
	fi

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

lint: $(STATICCHECK)
	@unformatted="$$(gofmt -l .)"; \
	if [ -n "$$unformatted" ]; then \
		echo "gofmt: these files need formatting (run gofmt -w):" >&2; \
		echo "$$unformatted" >&2; \
		exit 1; \
	fi
	$(GO) vet ./...
	$(STATICCHECK) ./...

$(STATICCHECK):
	GOBIN=$(dir $(STATICCHECK)) $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)

# Every `func FuzzXxx(` in a _test.go file, run alone in its package.
fuzz:
	@set -e; \
	for file in $$(grep -rlE --include='*_test.go' --exclude-dir=testdata --exclude-dir=.git \
			--exclude-dir=bin '^func Fuzz[A-Za-z0-9_]*\(' .); do \
		pkg="./$$(dirname "$${file#./}")"; \
		for name in $$(sed -nE 's/^func (Fuzz[A-Za-z0-9_]*)\(.*/\1/p' "$$file"); do \
			echo "fuzz: $$name in $$pkg for $(FUZZTIME)"; \
			$(GO) test -tags invariants -run '^$$' -fuzz "^$$name\$$" -fuzztime $(FUZZTIME) -fuzzminimizetime 3s "$$pkg"; \
		done; \
	done
