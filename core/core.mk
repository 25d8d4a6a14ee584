# core/: the physics library (libc + libm only) and its JSON binding (jansson).
CORE_SRC   := $(wildcard core/src/*.c)
CORE_OBJ   := $(CORE_SRC:%.c=$(B)/obj/%.o)
CORE_LIB   := $(B)/lib/libpt_core.a
SCHEMA_SRC := $(wildcard core/schema/*.c)
SCHEMA_OBJ := $(SCHEMA_SRC:%.c=$(B)/obj/%.o)
SCHEMA_LIB := $(B)/lib/libpt_schema.a

CFLAGS_core := -Icore/include -Icore/src

$(CORE_LIB): $(CORE_OBJ)
	@mkdir -p $(dir $@)
	$(Q)$(AR) rcs $@ $^
$(SCHEMA_LIB): $(SCHEMA_OBJ)
	@mkdir -p $(dir $@)
	$(Q)$(AR) rcs $@ $^

# The dependency rule of DESIGN.md: core/src sees nothing but libc and libm.
core-deps-check:
	@! grep -nE '#include *[<"](jansson|proto|server|pthread|threads)|[^n]printf *\(|\<(fopen|fwrite|fread|fputs|puts|getenv) *\(' \
	  core/src/*.c core/src/*.h core/include/ponytail/types.h core/include/ponytail/instance.h \
	  core/include/ponytail/world.h core/include/ponytail/motion.h core/include/ponytail/collider.h \
	  || { echo "core/src must not do I/O, use threads or include other modules"; exit 1; }

ALL_TARGETS += $(CORE_LIB) $(SCHEMA_LIB)
.PHONY: core-deps-check
