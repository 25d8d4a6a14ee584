/* Replays inputs through a libFuzzer target without libFuzzer: `make test` builds every
 * tests/fuzz/fuzz_*.c with this main() and the ordinary compiler (ASan and UBSan too under
 * SANITIZE=1), so the corpus and every crash reproducer are re-run on each landing.
 *
 * Usage: replay [FILE|DIR]...  With no arguments: tests/fuzz/corpus/<target>/ and
 * tests/fuzz/crashes/<target>/ (FUZZ_NAME is the target, set by tests/fuzz/fuzz.mk), from
 * the repository root. Prints how many inputs ran; exits 1 when none did (a missing corpus
 * is a mistake). A crash is the sanitizer's or abort()'s. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		perror(path);
		return -1;
	}
	size_t cap = 1 << 16, len = 0;
	uint8_t *buf = malloc(cap);
	for (size_t n; buf && (n = fread(buf + len, 1, cap - len, f)) > 0;) {
		len += n;
		if (len == cap) {
			uint8_t *nb = realloc(buf, cap *= 2);
			if (!nb)
				free(buf);
			buf = nb;
		}
	}
	fclose(f);
	if (!buf)
		return -1;
	/* An exact-size copy, so that ASan catches a read one past the input. */
	uint8_t *exact = malloc(len ? len : 1);
	memcpy(exact, buf, len);
	free(buf);
	LLVMFuzzerTestOneInput(exact, len);
	free(exact);
	return 0;
}

static int run_path(const char *path, int must_exist)
{
	struct stat st;
	if (stat(path, &st) != 0) {
		if (must_exist)
			perror(path);
		return must_exist ? -1 : 0;
	}
	if (!S_ISDIR(st.st_mode))
		return run_file(path) == 0 ? 1 : -1;
	DIR *d = opendir(path);
	if (!d)
		return -1;
	int n = 0;
	for (struct dirent *e; (e = readdir(d));) {
		if (e->d_name[0] == '.')
			continue;
		char p[4096];
		snprintf(p, sizeof p, "%s/%s", path, e->d_name);
		int r = run_path(p, 1);
		if (r < 0) {
			closedir(d);
			return -1;
		}
		n += r;
	}
	closedir(d);
	return n;
}

int main(int argc, char **argv)
{
	int n = 0;
	if (argc > 1) {
		for (int i = 1; i < argc; i++) {
			int r = run_path(argv[i], 1);
			if (r < 0)
				return 1;
			n += r;
		}
	} else {
		int a = run_path("tests/fuzz/corpus/" FUZZ_NAME, 1);
		int b = run_path("tests/fuzz/crashes/" FUZZ_NAME, 0);
		if (a < 0 || b < 0)
			return 1;
		n = a + b;
		printf("%s: replayed %d corpus inputs and %d crash reproducers\n", FUZZ_NAME, a, b);
	}
	return n > 0 ? 0 : 1;
}
