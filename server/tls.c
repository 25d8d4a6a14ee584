/* TLS credentials: read both PEM files, check them with OpenSSL (see tls.h). */
#include "tls.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/bio.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include "log.h"

/* The whole file at path, NUL-terminated, into *out. 0, or -1 with err naming flag. */
static int read_pem(const char *flag, const char *path, char **out, size_t *len, int *mode,
                    char *err, size_t errlen)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(err, errlen, "%s %s: cannot open: %s", flag, path, strerror(errno));
		return -1;
	}
	struct stat st;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "%s %s: not a regular file", flag, path);
		close(fd);
		return -1;
	}
	if (st.st_size <= 0 || st.st_size > TLS_MAX_FILE) {
		snprintf(err, errlen, "%s %s: %lld bytes; expected a PEM file of 1 to %d bytes",
		         flag, path, (long long)st.st_size, TLS_MAX_FILE);
		close(fd);
		return -1;
	}
	size_t n = (size_t)st.st_size, got = 0;
	char *buf = malloc(n + 1);
	while (buf && got < n) {
		ssize_t r = read(fd, buf + got, n - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	int e = errno;
	close(fd);
	if (!buf || got != n) {
		snprintf(err, errlen, "%s %s: %s", flag, path,
		         !buf         ? "out of memory"
		         : got < n && e ? strerror(e)
		                        : "file changed while read");
		if (buf)
			OPENSSL_cleanse(buf, n);
		free(buf);
		return -1;
	}
	buf[n] = '\0';
	*out = buf;
	*len = n;
	*mode = (int)(st.st_mode & 07777);
	return 0;
}

/* OpenSSL's newest error as text ("PEM routines::bad base64 decode"), then cleared. */
static const char *ssl_reason(char *buf, size_t cap)
{
	unsigned long e = ERR_peek_last_error();
	if (e)
		ERR_error_string_n(e, buf, cap);
	else
		snprintf(buf, cap, "no further detail");
	ERR_clear_error();
	return buf;
}

/* Refuses any passphrase: an encrypted key fails to load (the daemon has no prompt). */
static int no_password(char *buf, int size, int rwflag, void *u)
{
	(void)buf, (void)size, (void)rwflag, (void)u;
	return -1;
}

static int check(tls_creds_t *t, char *err, size_t errlen)
{
	char why[256];
	int rc = -1;
	X509 *leaf = NULL;
	EVP_PKEY *key = NULL;
	BIO *b = BIO_new_mem_buf(t->cert, (int)t->cert_len);
	if (!b) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	ERR_clear_error();
	leaf = PEM_read_bio_X509(b, NULL, no_password, NULL);
	if (!leaf) {
		snprintf(err, errlen,
		         "--tls-cert %s: no PEM certificate in it (expected a '-----BEGIN "
		         "CERTIFICATE-----' block: %s)",
		         t->cert_path, ssl_reason(why, sizeof why));
		goto out;
	}
	t->chain = 1;
	for (;;) { /* the rest of a chain file must parse too */
		X509 *x = PEM_read_bio_X509(b, NULL, no_password, NULL);
		if (!x) {
			unsigned long e = ERR_peek_last_error();
			if (ERR_GET_LIB(e) == ERR_LIB_PEM &&
			    ERR_GET_REASON(e) == PEM_R_NO_START_LINE) {
				ERR_clear_error();
				break; /* the end of the file */
			}
			snprintf(err, errlen,
			         "--tls-cert %s: certificate %d of the chain is not valid PEM: %s",
			         t->cert_path, t->chain + 1, ssl_reason(why, sizeof why));
			goto out;
		}
		X509_free(x);
		t->chain++;
	}
	BIO_free(b);
	b = BIO_new_mem_buf(t->key, (int)t->key_len);
	if (!b) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	key = PEM_read_bio_PrivateKey(b, NULL, no_password, NULL);
	if (!key) {
		if (strstr(t->key, "ENCRYPTED"))
			snprintf(err, errlen,
			         "--tls-key %s: the key is encrypted (has a passphrase), which the "
			         "daemon cannot ask for; decrypt it (openssl pkey -in KEY -out "
			         "PLAIN.pem) and protect the file by its mode instead",
			         t->key_path);
		else
			snprintf(err, errlen,
			         "--tls-key %s: no PEM private key in it (expected a '-----BEGIN "
			         "PRIVATE KEY-----' block: %s)",
			         t->key_path, ssl_reason(why, sizeof why));
		goto out;
	}
	if (X509_check_private_key(leaf, key) != 1) {
		ERR_clear_error();
		snprintf(err, errlen,
		         "--tls-key %s: does not match the certificate in --tls-cert %s (the first "
		         "certificate there must be the one issued for this key)",
		         t->key_path, t->cert_path);
		goto out;
	}
	X509_NAME_oneline(X509_get_subject_name(leaf), t->subject, sizeof t->subject);
	BIO *m = BIO_new(BIO_s_mem());
	if (m) {
		ASN1_TIME_print(m, X509_get0_notAfter(leaf));
		int n = BIO_read(m, t->not_after, (int)sizeof t->not_after - 1);
		t->not_after[n > 0 ? n : 0] = '\0';
		BIO_free(m);
	}
	if (X509_cmp_current_time(X509_get0_notAfter(leaf)) < 0)
		LOG(LOG_WARN,
		    "--tls-cert %s: the certificate expired on %s: clients will refuse it",
		    t->cert_path, t->not_after);
	else if (X509_cmp_current_time(X509_get0_notBefore(leaf)) > 0)
		LOG(LOG_WARN,
		    "--tls-cert %s: the certificate is not valid yet: clients will refuse it",
		    t->cert_path);
	rc = 0;
out:
	BIO_free(b);
	X509_free(leaf);
	EVP_PKEY_free(key);
	ERR_clear_error();
	return rc;
}

int tls_load(const config_t *cfg, tls_creds_t *t, char *err, size_t errlen)
{
	memset(t, 0, sizeof *t);
	int has_cert = cfg->tls_cert[0] != '\0', has_key = cfg->tls_key[0] != '\0';
	if (!has_cert && !has_key)
		return 0;
	if (!has_cert || !has_key) {
		snprintf(err, errlen,
		         "%s is set but %s is not: give both (PEM files) for HTTPS and WSS",
		         has_cert ? "--tls-cert" : "--tls-key", has_cert ? "--tls-key" : "--tls-cert");
		return -1;
	}
	t->cert_path = cfg->tls_cert;
	t->key_path = cfg->tls_key;
	int cert_mode, key_mode;
	if (read_pem("--tls-cert", t->cert_path, &t->cert, &t->cert_len, &cert_mode, err,
	             errlen) != 0 ||
	    read_pem("--tls-key", t->key_path, &t->key, &t->key_len, &key_mode, err, errlen) != 0 ||
	    check(t, err, errlen) != 0) {
		tls_free(t);
		return -1;
	}
	if (key_mode & 077)
		LOG(LOG_WARN, "--tls-key %s: readable by others (mode %04o); chmod 600 it",
		    t->key_path, key_mode);
	LOG(LOG_INFO, "HTTPS and WSS: certificate %s (%d in the chain, expires %s), key %s",
	    t->subject, t->chain, t->not_after, t->key_path);
	return 1;
}

void tls_free(tls_creds_t *t)
{
	if (t->key)
		OPENSSL_cleanse(t->key, t->key_len);
	free(t->key);
	free(t->cert);
	memset(t, 0, sizeof *t);
}
