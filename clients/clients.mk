# clients/: the `ponytail` command-line tool (clients/cli/*.c, one file per subcommand).
# Subcommands that need more libraries append to CLI_LIBS (archives, also prerequisites)
# and CLI_LDLIBS (-l flags).
CLI_SRC    := $(wildcard clients/cli/*.c)
CLI_OBJ    := $(CLI_SRC:%.c=$(B)/obj/%.o)
CLI_BIN    := $(B)/bin/ponytail
CLI_LIBS   += $(SCHEMA_LIB) $(CORE_LIB)
CLI_LDLIBS += $(PKG_JANSSON) -lm

CFLAGS_clients := -Icore/include -Iproto/include

$(CLI_BIN): $(CLI_OBJ) $(CLI_LIBS)
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(LDFLAGS) -o $@ $(CLI_OBJ) $(CLI_LIBS) $(CLI_LDLIBS)

ALL_TARGETS += $(CLI_BIN)
