/* The modules one daemon is made of, wired by main.c and handed to the REST and WebSocket
 * layers. Pointers are borrowed; main.c owns everything and tears it down in order.
 *
 * Threading: the struct is filled before any server thread starts and not changed
 * afterwards, except `draining` (atomic: set once at shutdown) and the two port numbers
 * (set before the other layer starts).
 */
#ifndef SERVER_APP_H
#define SERVER_APP_H

#include "cmdq.h"
#include "config.h"
#include "frame_ring.h"
#include "record.h"
#include "registry.h"
#include "sim.h"
#include "store.h"
#include "tls.h"

typedef struct app_t {
	const config_t *cfg;
	registry_t *reg;
	store_t *store;
	cmdq_t *q;
	sim_t *sim;
	frame_ring_t *ring;
	rec_t *rec; /* the rooms' recordings (record.h) */
	rec_disk_t *rec_disk; /* --record DIR's writer, NULL without */
	int http_port, ws_port; /* bound ports (differ from cfg when it said 0) */
	int ws_ready;           /* the WebSocket listener is up */
	int draining;           /* atomic: shutdown started; /readyz answers 503 */
	const tls_creds_t *tls; /* --tls-cert/--tls-key: both listeners speak TLS; NULL = plain */
} app_t;

#endif
