/* Reading files for the CLI. core/ does no I/O: its schema library reads JSON from a
 * buffer (pt_schema_read_buffer), and the callers read the files.
 *
 * Threading: plain functions, any thread. */
#ifndef PONYTAIL_CLI_JSONFILE_H
#define PONYTAIL_CLI_JSONFILE_H

#include <stddef.h>

#include "ponytail/schema.h"

/* The whole file at path, NUL-terminated (malloc'ed, caller frees; *len bytes before the
 * NUL), or NULL with errno set (fopen's, or EIO for a read error or no memory). */
char *cli_read_file(const char *path, size_t *len);

/* Reads a JSON document from the file at path: a new reference, or NULL with err set
 * (err->field = "", message such as "cannot open: No such file or directory" or
 * "line 3, column 14: '}' expected near ','"). Duplicate object keys are an error. The
 * path is not repeated in the message: the caller prefixes it. err may be NULL. */
json_t *cli_read_json_file(const char *path, pt_error *err);

#endif
