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

# libFuzzer targets: tests/fuzz/fuzz.mk (fuzz_proto_* are built from PROTO_SRC). The codec's
# fuzz flags, kept here because they follow the codec's rounding rules.
FUZZ_TIME ?= 60
FUZZ_FLAGS := -std=c11 -g -O1 -ffp-contract=off -fsanitize=fuzzer,address,undefined \
              -fno-sanitize-recover=undefined -Iproto/include

.PHONY: proto-deps-check
