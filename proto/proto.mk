# proto/: the wire protocol codec (libc + libm only), its fuzz target and vectors.
PROTO_SRC := $(wildcard proto/src/*.c)
PROTO_OBJ := $(PROTO_SRC:%.c=$(B)/obj/%.o)
PROTO_LIB := $(B)/lib/libpt_proto.a

# -ffp-contract=off is already global; repeated here because the codec's doubles must
# round exactly like the JS module's (proto/js), whatever the top-level flags become.
CFLAGS_proto := -Iproto/include -ffp-contract=off

$(PROTO_LIB): $(PROTO_OBJ)
	@mkdir -p $(dir $@)
	$(Q)$(AR) rcs $@ $^

# The dependency rule (README.md "Layout"): proto sees nothing but libc and libm.
proto-deps-check:
	@! grep -nE '#include *[<"](ponytail/|jansson|pthread|libwebsockets|microhttpd)' \
	  proto/src/*.c proto/src/*.h proto/include/ptp/*.h \
	  || { echo "proto/ must not include core, server or third-party headers"; exit 1; }

ALL_TARGETS += $(PROTO_LIB)

# libFuzzer targets (tests/fuzz/fuzz_proto_*.c) built straight from the sources with clang.
# New inputs go to build/fuzz/corpus-*/; the committed corpus is read-only seed input.
FUZZ_TIME ?= 60
FUZZ_SRC  := $(wildcard tests/fuzz/fuzz_proto_*.c)
FUZZ_BIN  := $(FUZZ_SRC:tests/fuzz/%.c=build/fuzz/%)
FUZZ_FLAGS := -std=c11 -g -O1 -ffp-contract=off -fsanitize=fuzzer,address,undefined \
              -fno-sanitize-recover=undefined -Iproto/include

build/fuzz/%: tests/fuzz/%.c $(PROTO_SRC) $(wildcard proto/src/*.h proto/include/ptp/*.h)
	@mkdir -p $(dir $@)
	clang $(FUZZ_FLAGS) -o $@ $< $(PROTO_SRC) -lm

fuzz:
	@.ci/deps fuzz
	@$(MAKE) --no-print-directory $(FUZZ_BIN)
	@for f in $(FUZZ_BIN); do \
	  n=$$(basename $$f); mkdir -p build/fuzz/corpus-$$n; \
	  echo "== $$f ($(FUZZ_TIME) s)"; \
	  $$f -max_total_time=$(FUZZ_TIME) -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
	    build/fuzz/corpus-$$n tests/fuzz/corpus/$$n || exit 1; \
	done

.PHONY: proto-deps-check
