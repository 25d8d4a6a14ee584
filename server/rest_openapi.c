/* GET /v1/openapi.json: the REST contract, server/openapi.json, compiled in (server.mk
 * turns the file into bytes), so the document served is the one in the repository. */
#include "rest_internal.h"

/* server.mk's generated openapi_json.c. */
extern const unsigned char openapi_json[];
extern const size_t openapi_json_len;

void h_openapi(const req_t *rq, resp_t *rs)
{
	(void)rq;
	resp_text(rs, 200, "application/json", (const char *)openapi_json, openapi_json_len);
	rs->cache = "no-cache";
}
