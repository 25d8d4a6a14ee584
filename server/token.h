/* Write tokens: 128 random bits, shown once, stored only as a SHA-256 hash.
 *
 * A token is 32 lowercase hex characters from getrandom(). The store keeps SHA-256(token);
 * a presented token is hashed and compared with the stored hash in constant time. One
 * unsalted hash is enough because the token itself carries 128 bits of entropy: there is
 * no dictionary to precompute, so a slow password hash would only cost CPU per request.
 *
 * SHA-256 is implemented here (FIPS 180-4, ~80 lines, tested against the NIST vectors)
 * rather than taken from libcrypto/nettle: it is the only primitive needed, and this keeps
 * the link lines free of a crypto library.
 *
 * Threading: every function is pure or uses only its arguments; any thread.
 */
#ifndef SERVER_TOKEN_H
#define SERVER_TOKEN_H

#include <stddef.h>
#include <stdint.h>

enum {
	TOKEN_LEN = 32,         /* hex characters of a generated token */
	TOKEN_HASH_LEN = 32,    /* bytes of its SHA-256 */
	TOKEN_MAX_BEARER = 128, /* bytes of a presented token at most (= PTP_MAX_TOKEN) */
};

/* SHA-256 of len bytes at data into out. */
void token_sha256(const void *data, size_t len, uint8_t out[TOKEN_HASH_LEN]);

/* A new token (TOKEN_LEN hex chars + NUL) in out. Returns 0, or -1 if the kernel's
 * random source fails (the caller answers 503: never fall back to a weak source). */
int token_generate(char out[TOKEN_LEN + 1]);

/* SHA-256 of the token's bytes. */
void token_hash(const char *token, size_t len, uint8_t out[TOKEN_HASH_LEN]);

/* 1 when the two hashes are equal; time independent of where they differ. */
int token_hash_equal(const uint8_t a[TOKEN_HASH_LEN], const uint8_t b[TOKEN_HASH_LEN]);

/* Finds the token in an Authorization header value "Bearer <token>" (scheme
 * case-insensitive, one or more spaces). Returns 0 with *tok and *len locating it in `header`,
 * or -1 when the header is missing, another scheme, or the token is empty, longer than
 * TOKEN_MAX_BEARER bytes or not visible ASCII. */
int token_from_bearer(const char *header, const char **tok, size_t *len);

#endif
