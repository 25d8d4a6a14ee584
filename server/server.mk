# server/: ponytaild, the daemon (REST + WebSocket + tick thread + SQLite store).
SERVER_SRC := $(wildcard server/*.c)
SERVER_OBJ := $(SERVER_SRC:%.c=$(B)/obj/%.o)
SERVER_BIN := $(B)/bin/ponytaild
SERVER_PKGS := libmicrohttpd libwebsockets jansson sqlite3

CFLAGS_server := -Icore/include -Iproto/include $(shell pkg-config --cflags $(SERVER_PKGS) 2>/dev/null)

$(SERVER_BIN): $(SERVER_OBJ) $(PROTO_LIB) $(SCHEMA_LIB) $(CORE_LIB)
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(LDFLAGS) -o $@ $(SERVER_OBJ) $(PROTO_LIB) $(SCHEMA_LIB) $(CORE_LIB) \
	  $(shell pkg-config --libs $(SERVER_PKGS) 2>/dev/null || echo -lmicrohttpd -lwebsockets -ljansson -lsqlite3) \
	  -lpthread -lm

ALL_TARGETS += $(SERVER_BIN)

# `make run`: build, start on the embedded defaults, print the URLs, and create a demo
# instance moved by a built-in motion when the store is empty.
run:
	@.ci/deps run
	@$(MAKE) --no-print-directory all
	@server/run.sh $(SERVER_BIN)
