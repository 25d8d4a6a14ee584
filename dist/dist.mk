# dist/: `make install`, the man pages and `make deb`.
#   make install PREFIX=/usr/local DESTDIR=   binaries, web client, man pages, the C
#                                              client library (+ header, pkg-config file;
#                                              in LIBDIR, default PREFIX/lib), the
#                                              systemd unit and its settings file
#   make deb                                   build/ponytail_VERSION_ARCH.deb (dpkg-deb;
#                                              DEB_MAINTAINER="Name <address>")
VERSION ?= $(shell sed -n 's/^#define PONYTAIL_VERSION "\(.*\)"/\1/p' server/config.c)
PREFIX  ?= /usr/local
DESTDIR ?=
SYSCONFDIR ?= $(if $(filter /usr,$(PREFIX)),/etc,$(PREFIX)/etc)
LIBDIR  ?= $(PREFIX)/lib
UNITDIR ?= $(PREFIX)/lib/systemd/system

MAN_PAGES    := $(B)/man/ponytaild.8 $(B)/man/ponytail.1
PTC_DIST_LIB := $(B)/lib/libponytail_client.a
DIST_SUBST    = sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@LIBDIR@|$(LIBDIR)|g' -e 's|@SYSCONFDIR@|$(SYSCONFDIR)|g' \
                    -e 's|@VERSION@|$(VERSION)|g'

# The installed library is one archive: the client library and the codec it speaks.
$(PTC_DIST_LIB): $(PTC_OBJ) $(PROTO_OBJ)
	@mkdir -p $(dir $@)
	$(Q)rm -f $@ && $(AR) rcs $@ $^

# Generated from the programs' --help (their option tables): they cannot drift.
$(B)/man/ponytaild.8: $(SERVER_BIN) $(CLI_BIN) dist/man.sh
	$(Q)dist/man.sh $(B)/bin $(VERSION) $(B)/man
$(B)/man/ponytail.1: $(B)/man/ponytaild.8

.PHONY: man install deb
man: $(MAN_PAGES)

install: all $(MAN_PAGES) $(PTC_DIST_LIB)
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/sbin $(DESTDIR)$(LIBDIR)/pkgconfig \
	  $(DESTDIR)$(PREFIX)/include/ponytail/ptp $(DESTDIR)$(PREFIX)/share/man/man1 \
	  $(DESTDIR)$(PREFIX)/share/man/man8 $(DESTDIR)$(PREFIX)/share/ponytail/proto/js \
	  $(DESTDIR)$(PREFIX)/share/doc/ponytail/examples $(DESTDIR)$(UNITDIR) $(DESTDIR)$(SYSCONFDIR)/default
	install -m 755 $(SERVER_BIN) $(DESTDIR)$(PREFIX)/sbin/ponytaild
	install -m 755 $(CLI_BIN) $(DESTDIR)$(PREFIX)/bin/ponytail
	install -m 644 $(B)/man/ponytail.1 $(DESTDIR)$(PREFIX)/share/man/man1/ponytail.1
	install -m 644 $(B)/man/ponytaild.8 $(DESTDIR)$(PREFIX)/share/man/man8/ponytaild.8
	install -m 644 $(PTC_DIST_LIB) $(DESTDIR)$(LIBDIR)/libponytail_client.a
	install -m 644 clients/lib/ponytail_client.h $(DESTDIR)$(PREFIX)/include/ponytail/
	install -m 644 proto/include/ptp/proto.h proto/include/ptp/strand.h $(DESTDIR)$(PREFIX)/include/ponytail/ptp/
	$(DIST_SUBST) dist/ponytail-client.pc.in >$(DESTDIR)$(LIBDIR)/pkgconfig/ponytail-client.pc
	rm -rf $(DESTDIR)$(PREFIX)/share/ponytail/web
	cp -R clients/web $(DESTDIR)$(PREFIX)/share/ponytail/
	cd $(DESTDIR)$(PREFIX)/share/ponytail/web && rm -f screenshot.png install-deps.sh package.json \
	  package-lock.json node_modules/.package-lock.json && chmod -R a-x,u=rwX,go=rX .
	install -m 644 proto/js/*.mjs $(DESTDIR)$(PREFIX)/share/ponytail/proto/js/
	install -m 644 clients/lib/example.c $(DESTDIR)$(PREFIX)/share/doc/ponytail/examples/
	$(DIST_SUBST) dist/ponytaild.service.in >$(DESTDIR)$(UNITDIR)/ponytaild.service
	install -m 644 dist/ponytaild.default $(DESTDIR)$(SYSCONFDIR)/default/ponytaild

DEB_MAINTAINER ?= Ponytail team <ponytail@example.org>
deb: all $(MAN_PAGES) $(PTC_DIST_LIB)
	@.ci/deps deb
	$(Q)DEB_MAINTAINER="$(DEB_MAINTAINER)" dist/deb.sh $(B) $(VERSION)
