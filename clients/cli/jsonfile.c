/* File reading for the CLI: see jsonfile.h. */
#include "jsonfile.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *cli_read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t n = 0, cap = 0;
	if (!f)
		return NULL;
	for (;;) {
		if (cap - n < 4096) {
			char *nb = realloc(buf, cap ? 2 * cap : 65536);
			if (!nb)
				break;
			buf = nb;
			cap = cap ? 2 * cap : 65536;
		}
		size_t k = fread(buf + n, 1, cap - n - 1, f);
		n += k;
		if (k == 0)
			break;
	}
	int bad = ferror(f) || !buf;
	fclose(f);
	if (bad) {
		free(buf);
		errno = EIO;
		return NULL;
	}
	buf[n] = '\0';
	*len = n;
	return buf;
}

json_t *cli_read_json_file(const char *path, pt_error *err)
{
	size_t len = 0;
	char *buf = cli_read_file(path, &len);
	if (!buf) {
		if (err) {
			err->ok = 0;
			err->field[0] = '\0';
			snprintf(err->message, sizeof err->message, "cannot open: %s",
			         strerror(errno));
		}
		return NULL;
	}
	json_t *j = pt_schema_read_buffer(buf, len, err);
	free(buf);
	return j;
}
