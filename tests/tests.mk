# tests/: every tests/<module>/test_*.c is a cmocka binary linked against all libraries;
# every tests/<module>/*.test.sh is a script and every tests/server/js/*.test.mjs a node
# test file of the daemon's integration tests, each run as a test of its own
# (tests/run-tests.sh); tests/bench/bench_*.c are benchmark programs (not run by `make test`).
LIBS_ALL := $(PROTO_LIB) $(SCHEMA_LIB) $(CORE_LIB)
TEST_SRC := $(wildcard tests/*/test_*.c)
TESTS    += $(TEST_SRC:tests/%.c=$(B)/tests/%)
TEST_SCRIPTS += $(sort $(wildcard tests/*/*.test.sh)) $(sort $(wildcard tests/server/js/*.test.mjs))
BENCH_SRC := $(wildcard tests/bench/bench_*.c)
BENCHES  += $(BENCH_SRC:tests/bench/%.c=$(B)/bench/%)
TEST_HELPERS := $(wildcard tests/common/*.c)
TEST_HELPER_OBJ := $(TEST_HELPERS:%.c=$(B)/obj/%.o)

CFLAGS_tests := -Icore/include -Icore/src -Iproto/include -Itests/common

$(B)/tests/%: $(B)/obj/tests/%.o $(TEST_HELPER_OBJ) $(LIBS_ALL)
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(LDFLAGS) -o $@ $< $(TEST_HELPER_OBJ) $(LIBS_ALL) $(PKG_CMOCKA) $(PKG_JANSSON) -lm

$(B)/bench/%: $(B)/obj/tests/bench/%.o $(TEST_HELPER_OBJ) $(LIBS_ALL)
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(LDFLAGS) -o $@ $< $(TEST_HELPER_OBJ) $(LIBS_ALL) $(PKG_JANSSON) -lm

# make test-scale: three daemons behind docker/'s nginx configs on loopback, then a fourth
# joining the ring (tests/scale/). `make test` runs it too, as one of TEST_SCRIPTS.
.PHONY: test-scale
test-scale: deps-test all
	@tests/run-tests.sh $(B) -- tests/scale/scale.test.sh

include tests/fuzz/fuzz.mk

# Long runs on demand: `make soak DURATION=3600`, `make crash-trials TRIALS=100`.
.PHONY: soak crash-trials
soak: deps-test all
	@PT_BUILD=$(B) SOAK_TIMING=1 DURATION=$(or $(DURATION),600) bash tests/server/soak.test.sh
crash-trials: deps-test all
	@PT_BUILD=$(B) TRIALS=$(or $(TRIALS),100) bash tests/server/crash.test.sh

# make callgrind-springbone: callgrind instructions per joint-substep of the spring-bone
# step, per variant (tests/bench/sb_callgrind.c; valgrind from Debian).
SB_CALLGRIND := $(B)/bench/sb_callgrind
callgrind-springbone: $(SB_CALLGRIND)
	@command -v valgrind >/dev/null || { echo "needs valgrind: apt-get install valgrind"; exit 1; }
	@for v in 0 1 2 3; do \
	  out=$$(valgrind --tool=callgrind --callgrind-out-file=$(B)/bench/sb_callgrind.$$v.out \
	    --toggle-collect=pt_world_step $(SB_CALLGRIND) $$v 10 2>&1); \
	  ir=$$(echo "$$out" | sed -n 's/.*Collected : \([0-9]*\).*/\1/p'); \
	  js=$$(echo "$$out" | sed -n 's/^joint-steps \([0-9]*\) hash \(.*\)/\1/p'); \
	  h=$$(echo "$$out" | sed -n 's/^joint-steps [0-9]* hash \(.*\)/\1/p'); \
	  echo "springbone variant $$v ($$(echo vrm center limits pull | cut -d' ' -f$$((v+1)))): $$(awk -v a=$$ir -v b=$$js 'BEGIN{printf "%.1f", a/b}') instructions per joint-substep (state hash $$h)"; \
	done
.PHONY: callgrind-springbone

# make callgrind-encode: callgrind instructions per instance-tick of the sim's encode pass
# (encode_part: entry reset + gather_one) with nobody watching, and with every instance
# watched by one compact 60 Hz, compact 10 Hz or classic 60 Hz viewer
# (tests/bench/bench_sim_encode.c; issue 15's "flat when nobody watches").
ENC_CALLGRIND := $(B)/bench/bench_sim_encode
callgrind-encode: $(ENC_CALLGRIND)
	@command -v valgrind >/dev/null || { echo "needs valgrind: apt-get install valgrind"; exit 1; }
	@for m in idle c60 c10 k60; do \
	  ir=$$(valgrind --tool=callgrind --callgrind-out-file=/dev/null --toggle-collect=encode_part \
	    $(ENC_CALLGRIND) $$m 300 60 2>&1 | sed -n 's/.*Collected : \([0-9]*\).*/\1/p'); \
	  echo "encode $$m: $$(awk -v a=$$ir 'BEGIN{printf "%.1f", a/18000}') instructions per instance-tick"; \
	done
.PHONY: callgrind-encode
