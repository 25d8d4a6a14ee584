# clients/: the `ponytail` command-line tool (clients/cli/*.c, one file per subcommand).
# Subcommands that need more libraries append to CLI_LIBS (archives, also prerequisites)
# and CLI_LDLIBS (-l flags).
CLI_SRC    := $(wildcard clients/cli/*.c)
CLI_OBJ    := $(CLI_SRC:%.c=$(B)/obj/%.o)
CLI_BIN    := $(B)/bin/ponytail
# sim and import-vrm: core and its schema library (libpt_schema.a, which holds the VRM
# importer, ponytail/vrm_import.h; import_vrm.c is only the command around it).
CLI_LIBS   += $(SCHEMA_LIB) $(CORE_LIB)
CLI_LDLIBS += $(PKG_JANSSON) -lm

CFLAGS_clients := -Icore/include -Iproto/include -Iclients/lib

# clients/lib: the C client library (libwebsockets + proto; never core) and its example.
# libcrypto: the library reads OpenSSL's reason when a wss:// certificate fails (ctx.c).
PKG_LWS  := $(shell pkg-config --libs libwebsockets libcrypto 2>/dev/null || echo -lwebsockets -lcrypto)
PKG_CURL := $(shell pkg-config --libs libcurl 2>/dev/null || echo -lcurl)
PTC_SRC  := $(filter-out clients/lib/example.c,$(wildcard clients/lib/*.c))
PTC_OBJ  := $(PTC_SRC:%.c=$(B)/obj/%.o)
PTC_LIB  := $(B)/lib/libpt_client.a
PTC_EXAMPLE := $(B)/bin/ponytail-client-example

# The library's own include path has no core/: the layer rule, enforced by the compiler.
$(PTC_OBJ) $(B)/obj/clients/lib/example.o: CFLAGS_clients := -Iproto/include -Iclients/lib

$(PTC_LIB): $(PTC_OBJ)
	@mkdir -p $(dir $@)
	$(Q)$(AR) rcs $@ $^

$(PTC_EXAMPLE): $(B)/obj/clients/lib/example.o $(PTC_LIB) $(PROTO_LIB)
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(PKG_LWS) -lm

# The REST subcommands use libcurl, stream/watch/load the client library.
CLI_LIBS   += $(PTC_LIB) $(PROTO_LIB)
CLI_LDLIBS += $(PKG_CURL) $(PKG_LWS)

# `ponytail vmc` decodes OSC with liblo (Debian liblo-dev).
PKG_LO := $(shell pkg-config --libs liblo 2>/dev/null || echo -llo)
CLI_LDLIBS += $(PKG_LO)

$(CLI_BIN): $(CLI_OBJ) $(CLI_LIBS)
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(LDFLAGS) -o $@ $(CLI_OBJ) $(CLI_LIBS) $(CLI_LDLIBS)

ALL_TARGETS += $(CLI_BIN) $(PTC_LIB) $(PTC_EXAMPLE)

# tests/client/test_*.c: unit tests of the library and of the CLI's helpers (the tests
# against a daemon are the scripts beside them). They link what tests.mk does not.
CLIENT_TEST_DEPS := $(B)/obj/clients/cli/hist.o $(B)/obj/clients/cli/poseline.o \
                    $(B)/obj/clients/cli/vmc_convert.o $(B)/obj/clients/cli/vmc_parse.o \
                    $(PTC_LIB) $(PROTO_LIB)
$(B)/obj/tests/client/%.o: CFLAGS_tests += -Iclients/lib -Iclients/cli
$(B)/tests/client/%: $(B)/obj/tests/client/%.o $(CLIENT_TEST_DEPS)
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(PKG_CMOCKA) $(PKG_JANSSON) $(PKG_LWS) $(PKG_LO) -lm

# tests/client/vmc_play: the VMC tracker that tests/client/vmc.test.sh plays (not a test
# itself, so not in TESTS; build-tests, which make test and make test-repeat run, builds
# every TEST_TOOLS).
VMC_PLAY := $(B)/tests/client/vmc_play
$(VMC_PLAY): $(B)/obj/tests/client/vmc_play.o $(PTC_LIB) $(PROTO_LIB)
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(PKG_LWS) $(PKG_LO) -lm
TEST_TOOLS += $(VMC_PLAY)

# clients/web/node_modules: the page's run-time assets from npm (MediaPipe Face Mesh, pinned
# by clients/web/package-lock.json), served by the daemon from the web root. npm ci leaves
# node_modules/.package-lock.json behind: the stamp.
WEB_DEPS := clients/web/node_modules/.package-lock.json
$(WEB_DEPS): clients/web/package.json clients/web/package-lock.json clients/web/install-deps.sh
	$(Q)clients/web/install-deps.sh
all: $(WEB_DEPS)
