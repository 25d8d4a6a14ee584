/* TLS credentials for both listeners: --tls-cert FILE and --tls-key FILE (PEM), read and
 * checked once at start-up, before any listener opens.
 *
 * The daemon serves HTTPS and WSS with the TLS its two libraries are built with in Debian
 * 12: libmicrohttpd with GnuTLS (it takes the PEM bytes read here), libwebsockets with
 * OpenSSL (it takes the file paths, so that a chain file works). The check is done here with
 * OpenSSL, so that a bad file stops start-up with a message naming the flag rather than a
 * library's generic failure: unreadable, not PEM, no certificate, an encrypted or missing
 * key, a key that does not match the certificate. An expired (or not yet valid)
 * certificate is logged as a warning, as nginx does: clients refuse it, the daemon still
 * serves its plain-text health checks over it.
 *
 * Threading: tls_load/tls_free from the main thread, before the listeners start and after
 * they stopped; the struct is read-only in between.
 */
#ifndef SERVER_TLS_H
#define SERVER_TLS_H

#include <stddef.h>

#include "config.h"

typedef struct tls_creds_t {
	char *cert, *key;      /* PEM text, NUL-terminated (the key is wiped by tls_free) */
	size_t cert_len, key_len;
	const char *cert_path; /* the config's --tls-cert / --tls-key */
	const char *key_path;
	int chain;             /* certificates in the cert file (leaf first) */
	char subject[256];     /* the leaf's subject, for the log */
	char not_after[64];    /* the leaf's expiry, "Dec  1 12:00:00 2027 GMT" */
} tls_creds_t;

/* Largest certificate or key file read, bytes. */
enum { TLS_MAX_FILE = 1 << 20 };

/* Reads and checks cfg->tls_cert and cfg->tls_key. Returns 0 when neither is set (plain
 * HTTP and WebSocket; *t zeroed), 1 when both are and *t holds them, or -1 with a
 * one-line message in err naming the flag ("--tls-key /x/k.pem: does not match the
 * certificate in --tls-cert /x/c.pem"). */
int tls_load(const config_t *cfg, tls_creds_t *t, char *err, size_t errlen);

/* Wipes the key and frees both. A zeroed struct is fine. */
void tls_free(tls_creds_t *t);

#endif
