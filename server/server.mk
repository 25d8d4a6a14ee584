# server/: ponytaild, the daemon (REST + WebSocket + tick thread + SQLite store).
# Only server/'s own sources: the VRM importer of POST /v1/import/vrm and avatar uploads is
# the schema library's (ponytail/vrm_import.h, in libpt_schema.a), as `ponytail import-vrm`'s is.
SERVER_SRC := $(wildcard server/*.c)
SERVER_OBJ := $(SERVER_SRC:%.c=$(B)/obj/%.o) $(B)/obj/gen/openapi_json.o
SERVER_BIN := $(B)/bin/ponytaild
SERVER_PKGS := libmicrohttpd libwebsockets jansson sqlite3 openssl

CFLAGS_server := -Icore/include -Iproto/include $(shell pkg-config --cflags $(SERVER_PKGS) 2>/dev/null)

$(SERVER_BIN): $(SERVER_OBJ) $(PROTO_LIB) $(SCHEMA_LIB) $(CORE_LIB)
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(LDFLAGS) -o $@ $(SERVER_OBJ) $(PROTO_LIB) $(SCHEMA_LIB) $(CORE_LIB) \
	  $(shell pkg-config --libs $(SERVER_PKGS) 2>/dev/null || echo -lmicrohttpd -lwebsockets -ljansson -lsqlite3 -lssl -lcrypto) \
	  -lpthread -lm

ALL_TARGETS += $(SERVER_BIN)

# The door (server/instances.h): the edges (REST and WebSocket) reach the store, the
# registry and the command queue only through instances_*. Hooked into check-layers.
SERVER_EDGES := $(wildcard server/rest*.c server/ws*.c server/rest*.h server/ws*.h)
server-door-check:
	@! grep -nE '\<(store|registry|cmdq)_[a-z_]+ *\(' $(SERVER_EDGES) \
	  || { echo "server: REST and WebSocket code must go through instances.h, not store_/registry_/cmdq_"; exit 1; }
.PHONY: server-door-check

# The daemon compiles no file under clients/ and includes none (README.md "Layout": clients
# depend on proto and, offline, on core; never the other way). The includes are read from
# every server/ source; what ponytaild is built from, from make itself: every command a
# full rebuild of it would run (`make -nB`: compiles, include paths, the link), with the
# variables as the rules finally expand them. Hooked into check-layers.
server-deps-check:
	@! grep -nE '^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"][^>"]*clients/' server/*.c server/*.h \
	  || { echo "server/ must not include files under clients/"; exit 1; }
	@cmds=$$($(MAKE) --no-print-directory -nB V=1 $(SERVER_BIN) 2>&1) \
	  || { echo "server-deps-check: make -nB $(SERVER_BIN) failed:"; echo "$$cmds" | tail -5; exit 1; }; \
	  bad=$$(printf '%s\n' $$cmds | grep 'clients/' | sort -u); \
	  test -z "$$bad" || { echo "server.mk: ponytaild must not be built from or see files under clients/:" $$bad; exit 1; }
.PHONY: server-deps-check

# server/openapi.json as bytes in the binary (GET /v1/openapi.json), NUL-terminated.
$(B)/gen/openapi_json.c: server/openapi.json
	@mkdir -p $(dir $@)
	$(Q){ echo '/* Generated from server/openapi.json by server/server.mk. */'; \
	  echo '#include <stddef.h>'; \
	  echo 'extern const unsigned char openapi_json[];'; \
	  echo 'extern const size_t openapi_json_len;'; \
	  echo 'const unsigned char openapi_json[] = {'; \
	  od -An -v -tx1 $< | sed -e 's/\([0-9a-f][0-9a-f]\)/0x\1,/g'; \
	  echo '0x00};'; \
	  echo 'const size_t openapi_json_len = sizeof openapi_json - 1;'; } >$@.tmp && mv $@.tmp $@
$(B)/obj/gen/openapi_json.o: $(B)/gen/openapi_json.c
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS) -c $< -o $@

# `make run`: build, start on the embedded defaults, print the URLs, and create a demo
# instance moved by a built-in motion when the store is empty.
run:
	@.ci/deps run
	@$(MAKE) --no-print-directory all
	@server/run.sh $(SERVER_BIN)
