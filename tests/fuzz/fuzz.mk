# tests/fuzz/: libFuzzer targets, one tests/fuzz/fuzz_<name>.c each, with its seed corpus in
# tests/fuzz/corpus/fuzz_<name>/ and the reproducer of every crash found in
# tests/fuzz/crashes/fuzz_<name>/ (kept after the fix, so it is replayed for ever). Seed
# generators: tests/fuzz/make-corpus.mjs (fuzz_proto_decode, fuzz_proto_strand) and
# tests/fuzz/make_seeds.py (fuzz_schema, fuzz_vmc, fuzz_vrm).
#   make fuzz [FUZZ_S=60]  each target under libFuzzer (clang) for FUZZ_S seconds; new
#                          inputs go to build/fuzz/corpus-<name>/, crashes to build/fuzz/
#   make test              replays every corpus and crash file: the same targets built with
#                          $(CC) (and the sanitizers under SANITIZE=1) and replay.c's main()
FUZZ_S ?= $(FUZZ_TIME)
.SECONDEXPANSION:
FUZZ_SRC := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_BIN := $(FUZZ_SRC:tests/fuzz/%.c=build/fuzz/%)
FUZZ_REPLAY := $(FUZZ_SRC:tests/fuzz/%.c=$(B)/fuzz-replay/%)

# What each target is built from besides its own file (the harness may #include more).
FUZZ_SERVER_SRC := $(filter-out server/main.c server/rest.c server/ws.c server/ws_conn.c server/ws_batch.c server/ws_order.c server/ws_grab.c server/tls.c,$(wildcard server/*.c))
FUZZ_SRC_fuzz_proto_decode := $(PROTO_SRC)
FUZZ_SRC_fuzz_proto_strand := $(PROTO_SRC)
FUZZ_SRC_fuzz_proto_compact := $(PROTO_SRC)
FUZZ_SRC_fuzz_schema := $(SCHEMA_SRC) $(CORE_SRC)
FUZZ_SRC_fuzz_vrm    := $(SCHEMA_SRC) $(CORE_SRC)
FUZZ_SRC_fuzz_vmc    := clients/cli/vmc_parse.c clients/cli/vmc_convert.c
FUZZ_SRC_fuzz_rest   := $(FUZZ_SERVER_SRC) $(SCHEMA_SRC) $(CORE_SRC) $(PROTO_SRC)
# Generated sources (server.mk embeds openapi.json): as .c for clang, as objects for replay.
FUZZ_GEN_fuzz_rest    := $(B)/gen/openapi_json.c
FUZZ_GENOBJ_fuzz_rest := $(B)/obj/gen/openapi_json.o
FUZZ_LDLIBS := $(PKG_JANSSON) -lsqlite3 $(PKG_LO) -lpthread -lm
FUZZ_INC := -D_POSIX_C_SOURCE=200809L -Icore/include -Icore/src -Iproto/include -Iserver -Iclients/cli

build/fuzz/%: tests/fuzz/%.c $$(FUZZ_GEN_$$*) $(wildcard tests/fuzz/*.h server/*.h core/include/*/*.h proto/include/*/*.h)
	@mkdir -p $(dir $@)
	clang $(FUZZ_FLAGS) $(FUZZ_INC) -o $@ $< $(FUZZ_SRC_$*) $(FUZZ_GEN_$*) $(FUZZ_LDLIBS)

# Replay builds link the ordinary objects (so SANITIZE=1 applies) and replay.c.
$(B)/fuzz-replay/%: $(B)/obj/tests/fuzz/%.o $(B)/obj/tests/fuzz/replay-%.o
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(FUZZ_LDLIBS) || { rm -f $@; exit 1; }
$(B)/obj/tests/fuzz/replay-%.o: tests/fuzz/replay.c
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS) -DFUZZ_NAME='"$*"' -c $< -o $@
$(B)/obj/tests/fuzz/%.o: CFLAGS_tests += -Iserver -Iclients/cli
$(FUZZ_REPLAY): $$(patsubst %.c,$(B)/obj/%.o,$$(FUZZ_SRC_$$(notdir $$@))) $$(FUZZ_GENOBJ_$$(notdir $$@))
TESTS += $(FUZZ_REPLAY)

fuzz:
	@.ci/deps fuzz
	@$(MAKE) --no-print-directory $(FUZZ_BIN)
	@for f in $(FUZZ_BIN); do \
	  n=$$(basename $$f); mkdir -p build/fuzz/corpus-$$n; \
	  echo "== $$f ($(FUZZ_S) s)"; \
	  $$f -max_total_time=$(FUZZ_S) -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
	    -artifact_prefix=build/fuzz/$$n- build/fuzz/corpus-$$n tests/fuzz/corpus/$$n || exit 1; \
	done
