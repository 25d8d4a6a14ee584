/* Private to the door's files (instances.c, instances_room.c, instances_avatar.c): the
 * writer lock that keeps the store, the registry and the sim in one order (instances.h),
 * and the two ways a door call ends. */
#ifndef SERVER_INSTANCES_INTERNAL_H
#define SERVER_INSTANCES_INTERNAL_H

#include <pthread.h>

#include "instances.h"

extern pthread_mutex_t inst_writer;

/* Fills err (field NULL: none) and returns the status. */
__attribute__((format(printf, 4, 5))) inst_status_t
inst_refuse(inst_err_t *err, inst_status_t s, const char *field, const char *fmt, ...);
/* Clears err and returns INST_OK. */
inst_status_t inst_ok(inst_err_t *err);

#endif
