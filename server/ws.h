/* The WebSocket layer (libwebsockets 4.1.6, one service thread): the protocol of
 * proto/PROTOCOL.md, subprotocol ponytail.v1.
 *
 * The sim publishes each tick's frame set into the frame ring and wakes this thread with
 * lws_cancel_service() (the only lws call made from another thread). The service thread
 * then takes the newest frame set and the queued instance events, and asks every
 * subscribed connection for a WRITEABLE callback, where one lws_write sends one message:
 * queued control messages first, then that tick's frame batch, built from the records the
 * sim encoded once per instance. A connection that cannot keep up is simply offered the
 * newest tick when it can write again (keyframes for what it missed); nothing queues up.
 *
 * Threading: ws_start/ws_shutdown from the main thread; everything else in ws*.c runs on
 * the service thread.
 */
#ifndef SERVER_WS_H
#define SERVER_WS_H

#include <stddef.h>

#include "app.h"

typedef struct ws_t ws_t;

/* Listens on cfg->bind:cfg->ws_port, sets app->ws_port and app->ws_ready, hooks the
 * frame ring's notify and starts the service thread. NULL with err set on failure. */
ws_t *ws_start(app_t *app, char *err, size_t errlen);

/* Refuses new connections, sends every client error "shutdown" and closes it with 1001
 * (going away), waits for the closes (at most ~2 s), stops the thread and frees the
 * context. NULL ok. */
void ws_shutdown(ws_t *ws);

#endif
