# core/: the physics library (libc + libm only) and its JSON binding (jansson), which holds
# the VRM importer too (core/schema/vrm/, ponytail/vrm_import.h): one libpt_schema.a that
# the daemon and the CLI both link.
CORE_SRC   := $(wildcard core/src/*.c)
CORE_OBJ   := $(CORE_SRC:%.c=$(B)/obj/%.o)
CORE_LIB   := $(B)/lib/libpt_core.a
SCHEMA_SRC := $(wildcard core/schema/*.c core/schema/vrm/*.c)
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
# pure parts, libm, its own headers and xxhash.h (XXH3, compiled in: no library); core/schema (the VRM importer in core/schema/vrm/
# included) adds jansson and <ctype.h>. Listed positively: an #include of anything not on
# these lists fails `make check-layers`. <stdio.h> is there for snprintf, so the stdio
# calls that do I/O are refused by name as well, and so are jansson's file readers and
# writers: the schema library parses and dumps from and to memory, its callers do the I/O.
CORE_SYS_HEADERS := assert.h float.h math.h stdarg.h stddef.h stdint.h stdio.h stdlib.h \
                    string.h immintrin.h xxhash.h
SCHEMA_PUBLIC    := core/include/ponytail/schema.h core/include/ponytail/vrm_import.h \
                    core/include/ponytail/record.h
CORE_OWN_HEADERS := $(patsubst core/include/%,%,$(filter-out $(SCHEMA_PUBLIC),$(wildcard core/include/ponytail/*.h))) \
                    $(notdir $(wildcard core/src/*.h core/src/*.inc))
SCHEMA_HEADERS   := $(CORE_SYS_HEADERS) ctype.h jansson.h ponytail/schema.h ponytail/instance.h \
                    ponytail/types.h ponytail/vrm_import.h schema_internal.h \
                    ponytail/record.h ponytail/world.h ponytail/wind.h ponytail/touch.h \
                    $(notdir $(wildcard core/schema/vrm/*.h))
CORE_FILES       := $(wildcard core/src/*.c core/src/*.h core/src/*.inc) \
                    $(filter-out $(SCHEMA_PUBLIC),$(wildcard core/include/ponytail/*.h))
SCHEMA_FILES     := $(wildcard core/schema/*.c core/schema/*.h core/schema/vrm/*.c core/schema/vrm/*.h) \
                    $(SCHEMA_PUBLIC)

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
	@! grep -nE '[^n]printf *\(|\<(fopen|freopen|fclose|fflush|fwrite|fread|fputs|fgets|fputc|fgetc|puts|getc|putc|getchar|putchar|perror|getenv|remove|rename|tmpfile) *\(' \
	  $(CORE_FILES) $(SCHEMA_FILES) \
	  || { echo "core must not do I/O (snprintf only)"; exit 1; }
	@! grep -nE '\<json_(load_file|loadf|loadfd|load_callback|dump_file|dumpf|dumpfd|dump_callback) *\([^)]' \
	  $(SCHEMA_FILES) \
	  || { echo "core/schema must not do I/O: it parses and dumps in memory (json_loadb, json_dumps)"; exit 1; }

ALL_TARGETS += $(CORE_LIB) $(SCHEMA_LIB)
.PHONY: core-deps-check
