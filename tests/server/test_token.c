/* server/token.c: SHA-256 against the NIST/FIPS 180-4 vectors (and padding boundaries),
 * token generation, constant-time comparison, Bearer header parsing. The module is
 * compiled into this test (server objects are not linked into test binaries). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../server/token.c"

static void hex(const uint8_t *h, char out[65])
{
	for (int i = 0; i < 32; i++)
		snprintf(out + 2 * i, 3, "%02x", h[i]);
}

static void check(const void *data, size_t len, const char *want)
{
	uint8_t h[TOKEN_HASH_LEN];
	char s[65];
	token_sha256(data, len, h);
	hex(h, s);
	assert_string_equal(s, want);
}

static void sha256_vectors(void **state)
{
	(void)state;
	check("", 0, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	check("abc", 3, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	check("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", 56,
	      "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
	char *a = malloc(1000000);
	assert_non_null(a);
	memset(a, 'a', 1000000);
	check(a, 1000000, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
	free(a);
}

/* Lengths around the 55/56/64-byte padding boundaries (values from Python's hashlib). */
static void sha256_padding_boundaries(void **state)
{
	(void)state;
	char x[128];
	memset(x, 'x', sizeof x);
	check(x, 55, "d5e285683cd4efc02d021a5c62014694958901005d6f71e89e0989fac77e4072");
	check(x, 56, "04c26261370ee7541549d16dee320c723e3fd14671e66a099afe0a377c16888e");
	check(x, 63, "75220b47218278e656f2013bb8f0c455a25eaf01e86c64924e9d48d89776d6f2");
	check(x, 64, "7ce100971f64e7001e8fe5a51973ecdfe1ced42befe7ee8d5fd6219506b5393c");
	check(x, 119, "000b48d4edf0fa7bee3c6236ecd2785baa5db4eeb8bb54341b029e0d9fa5fb0c");
}

static void tokens_are_128_random_bits_in_hex(void **state)
{
	(void)state;
	char a[TOKEN_LEN + 1], b[TOKEN_LEN + 1];
	assert_int_equal(token_generate(a), 0);
	assert_int_equal(token_generate(b), 0);
	assert_int_equal(strlen(a), 32);
	assert_int_equal(strspn(a, "0123456789abcdef"), 32);
	assert_string_not_equal(a, b);
	uint8_t ha[TOKEN_HASH_LEN], ha2[TOKEN_HASH_LEN], hb[TOKEN_HASH_LEN];
	token_hash(a, strlen(a), ha);
	token_hash(a, strlen(a), ha2);
	token_hash(b, strlen(b), hb);
	assert_true(token_hash_equal(ha, ha2));
	assert_false(token_hash_equal(ha, hb));
	/* Differences at either end are both found. */
	ha2[0] ^= 1;
	assert_false(token_hash_equal(ha, ha2));
	ha2[0] ^= 1;
	ha2[31] ^= 0x80;
	assert_false(token_hash_equal(ha, ha2));
}

static void bearer_header(void **state)
{
	(void)state;
	const char *t;
	size_t n;
	assert_int_equal(token_from_bearer("Bearer abc123", &t, &n), 0);
	assert_int_equal(n, 6);
	assert_memory_equal(t, "abc123", 6);
	assert_int_equal(token_from_bearer("bearer   abc  ", &t, &n), 0);
	assert_int_equal(n, 3);
	assert_int_equal(token_from_bearer(NULL, &t, &n), -1);
	assert_int_equal(token_from_bearer("", &t, &n), -1);
	assert_int_equal(token_from_bearer("Bearer", &t, &n), -1);
	assert_int_equal(token_from_bearer("Bearer ", &t, &n), -1);
	assert_int_equal(token_from_bearer("Basic dXNlcjpwYXNz", &t, &n), -1);
	assert_int_equal(token_from_bearer("Bearerabc", &t, &n), -1);
	assert_int_equal(token_from_bearer("Bearer a b", &t, &n), -1);
	assert_int_equal(token_from_bearer("Bearer \x01"
	                                   "abc",
	                                   &t, &n),
	                 -1);
	char big[200] = "Bearer ";
	memset(big + 7, 'a', 129);
	assert_int_equal(token_from_bearer(big, &t, &n), -1);
	big[7 + 128] = '\0';
	assert_int_equal(token_from_bearer(big, &t, &n), 0);
	assert_int_equal(n, 128);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(sha256_vectors),
	    cmocka_unit_test(sha256_padding_boundaries),
	    cmocka_unit_test(tokens_are_128_random_bits_in_hex),
	    cmocka_unit_test(bearer_header),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
