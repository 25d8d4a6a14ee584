# server/: ponytaild, the daemon (REST + WebSocket + tick thread + SQLite store).
SERVER_SRC := $(wildcard server/*.c)
# The VRM importer of `ponytail import-vrm`, compiled in from the CLI's own sources (not
# moved: one importer for both) for POST /v1/import/vrm and avatar uploads.
SERVER_VRM_SRC := $(wildcard clients/cli/vrm_*.c clients/cli/import_vrm*.c)
SERVER_OBJ := $(SERVER_SRC:%.c=$(B)/obj/%.o) $(B)/obj/gen/openapi_json.o \
              $(SERVER_VRM_SRC:%.c=$(B)/obj/%.o)
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
