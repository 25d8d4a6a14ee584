# core/: the physics library (libc + libm only) and its JSON binding (jansson).
CORE_SRC   := $(wildcard core/src/*.c)
CORE_OBJ   := $(CORE_SRC:%.c=$(B)/obj/%.o)
CORE_LIB   := $(B)/lib/libpt_core.a
SCHEMA_SRC := $(wildcard core/schema/*.c)
SCHEMA_OBJ := $(SCHEMA_SRC:%.c=$(B)/obj/%.o)
SCHEMA_LIB := $(B)/lib/libpt_schema.a

CFLAGS_core := -Icore/include -Icore/src

# The verlet kernel on the plain-C eight-lane emulation is one huge inlined function; under
# ASan each file takes about 250 s to compile at -g, most of it in variable tracking; -g1
# keeps the line tables that sanitizer reports print and takes about 100 s.
# The spring bone's emulated kernel is the same shape (187 s under ASan at -g).
ifeq ($(SANITIZE),1)
$(B)/obj/core/src/lanes_scalar.o $(B)/obj/core/src/lanes_scalar_fma.o \
$(B)/obj/core/src/springbone_lanes_scalar.o: CFLAGS += -g1
endif

$(CORE_LIB): $(CORE_OBJ)
	@mkdir -p $(dir $@)
	$(Q)$(AR) rcs $@ $^
$(SCHEMA_LIB): $(SCHEMA_OBJ)
	@mkdir -p $(dir $@)
	$(Q)$(AR) rcs $@ $^

# The dependency rule (README.md "Layout"): core does no I/O and sees only the C library's
# pure parts, libm and its own headers; core/schema adds jansson. Listed positively: an
# #include of anything not on these lists fails `make check-layers`. <stdio.h> is there for
# snprintf, so the stdio calls that do I/O are refused by name as well.
CORE_SYS_HEADERS := assert.h float.h math.h stdarg.h stddef.h stdint.h stdio.h stdlib.h \
                    string.h immintrin.h
CORE_OWN_HEADERS := $(patsubst core/include/%,%,$(filter-out %/schema.h,$(wildcard core/include/ponytail/*.h))) \
                    $(notdir $(wildcard core/src/*.h core/src/*.inc))
SCHEMA_HEADERS   := $(CORE_SYS_HEADERS) jansson.h ponytail/schema.h ponytail/instance.h \
                    ponytail/types.h schema_internal.h
CORE_FILES       := $(wildcard core/src/*.c core/src/*.h core/src/*.inc) \
                    $(filter-out %/schema.h,$(wildcard core/include/ponytail/*.h))
SCHEMA_FILES     := $(wildcard core/schema/*.c core/schema/*.h) core/include/ponytail/schema.h

# $(call core_only_includes,FILES,ALLOWED): names every #include of FILES not in ALLOWED.
define core_only_includes
	@for f in $(1); do \
	  grep -oE '^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"][^>"]+' "$$f" | sed -E 's/.*[<"]//' | \
	  while read -r h; do \
	    case " $(2) " in *" $$h "*) ;; *) echo "$$f: #include $$h is not on core's list (core/core.mk)"; exit 1;; esac; \
	  done || exit 1; \
	done
endef

core-deps-check:
	$(call core_only_includes,$(CORE_FILES),$(CORE_SYS_HEADERS) $(CORE_OWN_HEADERS))
	$(call core_only_includes,$(SCHEMA_FILES),$(SCHEMA_HEADERS))
	@! grep -nE '[^n]printf *\(|\<(fopen|freopen|fwrite|fread|fputs|fgets|puts|getenv|remove|rename|tmpfile) *\(' \
	  $(CORE_FILES) $(SCHEMA_FILES) \
	  || { echo "core must not do I/O (snprintf only)"; exit 1; }

ALL_TARGETS += $(CORE_LIB) $(SCHEMA_LIB)
.PHONY: core-deps-check
