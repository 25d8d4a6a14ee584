# Ponytail — the only build entry point. Everything lands in build/.
#
#   make            build libraries and binaries (build/bin/)
#   make test       build and run every test, JOBS=3 at a time, each under its own timeout
#                   (tests/run-tests.sh; installs missing Debian and npm packages as root
#                   first: tests/setup.sh). TEST_FILTER=REGEX runs only the matching tests.
#   make test-repeat N=10 LOAD=60
#                   the whole suite N times in a row, with LOAD (% of both cores, from
#                   stress-ng) of load beside it when given: the flake check
#   make test-scale only the scale-out test: 3 daemons behind nginx on loopback (tests/scale/)
#   make bench      the in-process kernels with their peers and the callgrind counts;
#                   writes build/bench/results.json and tests/bench/RESULTS.md
#                   (tests/bench/README.md: how to run and read them)
#   make bench-live the capacity and latency searches against live daemons (minutes each)
#   make run        build and start ponytaild on its embedded defaults
#   make install    PREFIX=/usr/local DESTDIR=: binaries, web client, man pages, C client
#                   library + header + pkg-config file, systemd unit (dist/dist.mk)
#   make deb        build/ponytail_VERSION_ARCH.deb with dpkg-deb
#   make fuzz       run the libFuzzer targets for a bounded time
#   make format     clang-format every C file
#
# Options: WERROR=1 (warnings are errors, as in CI), SANITIZE=1 (ASan + UBSan, builds
# into build/san/), SIMD=0 (leave the AVX2 kernels out), V=1 (echo commands).

CC      ?= cc
WERROR  ?= 0
SANITIZE ?= 0
SIMD    ?= 1

ifeq ($(SANITIZE),1)
B := build/san
else
B := build
endif

WARN    := -Wall -Wextra -Wpedantic -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
           -Wpointer-arith -Wcast-qual -Wvla -Wformat=2
# -ffp-contract=off: no fused multiply-add, so scalar and SIMD kernels round alike and
# results are bit-identical across the two (the determinism tests check this).
CFLAGS  := -std=c11 -D_POSIX_C_SOURCE=200809L -O2 -g -ffp-contract=off -fno-math-errno $(WARN) -MMD -MP
LDFLAGS :=
ifeq ($(WERROR),1)
CFLAGS  += -Werror
endif
ifeq ($(SANITIZE),1)
CFLAGS  += -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
LDFLAGS += -fsanitize=address,undefined
endif
ifeq ($(SIMD),0)
CFLAGS  += -DPT_NO_SIMD
endif

ifeq ($(V),1)
Q :=
else
Q := @
endif

PKG_JANSSON := $(shell pkg-config --cflags --libs jansson 2>/dev/null || echo -ljansson)
PKG_CMOCKA  := $(shell pkg-config --cflags --libs cmocka 2>/dev/null || echo -lcmocka)

.PHONY: all test bench run fuzz format clean deps deps-test check-layers
all:

# Each module describes its own targets; they add to ALL_TARGETS, TESTS and BENCHES.
ALL_TARGETS :=
TESTS       :=
TEST_SCRIPTS :=
BENCHES     :=
include core/core.mk
-include proto/proto.mk
-include clients/clients.mk
-include server/server.mk
-include dist/dist.mk
include tests/tests.mk

all: $(ALL_TARGETS)

# Keep test and benchmark objects between runs (they are intermediates of pattern rules).
.SECONDARY:

$(B)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(if $(Q),@echo "  CC  $<")
	$(Q)$(CC) $(CFLAGS) $(CFLAGS_$(firstword $(subst /, ,$<))) -c $< -o $@

deps:
	@.ci/deps build
deps-test:
	@tests/setup.sh

# The dependency direction (README.md "Layout"): core <- server; proto <- server, clients; core
# never sees proto; clients see core only in the offline tools (sim, import-vrm); the server
# never sees clients (the VRM importer both use is core's schema library).
check-layers: core-deps-check proto-deps-check server-door-check server-deps-check
	@! grep -nE '#include *[<"](ponytail/|jansson|server)' proto/src/*.c proto/src/*.h proto/include/*/*.h 2>/dev/null \
	  || { echo "proto/ must not include core, jansson or server headers"; exit 1; }
	@! grep -lE '#include *[<"]ponytail/(world|instance|motion|collider)\.h' clients/lib/*.c clients/lib/*.h 2>/dev/null \
	  || { echo "clients/lib must not see core"; exit 1; }

# The build uses both cores (a sub-make, so that a plain `make test` is parallel too);
# the tests run JOBS at a time.
NPROC ?= $(shell nproc 2>/dev/null || echo 2)
JOBS  ?= 3
.PHONY: build-tests test-repeat bench-live
# The SIMD=0 comparison scripts' build (tests/common/nosimd.sh), made here with both
# cores; the sanitizer phase skips those scripts.
NOSIMD_TESTS := tests/core/test_world tests/springbone/test_sb_lanes tests/proto/test_enc_hash
build-tests:
	@$(MAKE) -s --no-print-directory -j$(NPROC) all $(TESTS) $(TEST_TOOLS)
ifneq ($(SANITIZE),1)
	@$(MAKE) -s --no-print-directory -j$(NPROC) SIMD=0 B=build/nosimd $(NOSIMD_TESTS:%=build/nosimd/%)
endif
test: check-layers deps-test
	@$(MAKE) --no-print-directory build-tests
	@JOBS=$(JOBS) tests/run-tests.sh $(B) $(TESTS) -- $(TEST_SCRIPTS)

N    ?= 10
LOAD ?= 0
test-repeat: check-layers deps-test
	@$(MAKE) --no-print-directory build-tests
	@JOBS=$(JOBS) tests/repeat.sh $(N) $(LOAD) $(B) $(TESTS) -- $(TEST_SCRIPTS)

# make bench: the in-process benchmarks (BENCH_RUNS=3 rounds, each with the peers) and
# the callgrind counts (tests/bench/run-bench.sh). make bench-live: the searches against
# live daemons on loopback (server capacity and latency, the load generator), each of
# which repeats itself; BENCH_LIVE_RUNS=N repeats them as a whole.
BENCH_RUNS ?= 3
BENCH_LIVE_RUNS ?= 1
bench: deps-test
	@$(MAKE) --no-print-directory -j$(NPROC) all $(BENCHES)
	@PT_BENCH_RUNS=$(BENCH_RUNS) PT_BENCH_RESULTS=tests/bench/RESULTS.md \
	  tests/bench/run-bench.sh $(B) $(BENCHES)
bench-live: deps-test
	@$(MAKE) --no-print-directory -j$(NPROC) all $(B)/bench/bench_avatar
	@PT_BENCH_OUT=$(B)/bench-live PT_BENCH_RUNS=0 PT_BENCH_CALLGRIND=0 PT_BENCH_PEERS= \
	  PT_BENCH_EXTRA_RUNS=$(BENCH_LIVE_RUNS) \
	  PT_BENCH_EXTRA="tests/bench/bench_server.sh tests/bench/bench_load.sh" \
	  tests/bench/run-bench.sh $(B)

format:
	clang-format -i $$(git ls-files '*.c' '*.h')

clean:
	rm -rf build

-include $(shell find $(B)/obj -name '*.d' 2>/dev/null)
