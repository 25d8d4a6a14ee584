/* The HTTP layer (libmicrohttpd): listener, request lifecycle, body limits, routing to
 * the handlers of rest_instances.c, rest_system.c and rest_static.c.
 *
 * libmicrohttpd runs in thread-per-connection mode: instance writes block their own
 * connection's thread until the sim has applied them (at most about one tick) and nothing
 * else. Limits: --max-body (413), --max-conns-per-ip (MHD_OPTION_PER_IP_CONNECTION_LIMIT),
 * --request-timeout (MHD_OPTION_CONNECTION_TIMEOUT), --write-rate per address (429).
 *
 * Threading: rest_start/quiesce/stop from the main thread. Handlers run on MHD's
 * connection threads, concurrently.
 */
#ifndef SERVER_REST_H
#define SERVER_REST_H

#include <stddef.h>

#include "app.h"

typedef struct rest_t rest_t;

/* Binds cfg->bind:cfg->http_port and starts serving; sets app->http_port. NULL with a
 * message in err on failure. */
rest_t *rest_start(app_t *app, char *err, size_t errlen);

/* Stops accepting new connections (requests in flight continue). */
void rest_quiesce(rest_t *r);

/* Closes every connection and joins the threads; requests blocked on the sim must be able
 * to complete (stop the sim after this, or close its queue first). NULL ok. */
void rest_stop(rest_t *r);

#endif
