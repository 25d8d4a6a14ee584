/* Private to the door's files (instances.c, instances_room.c): the writer lock that keeps
 * the store, the registry and the sim in one order (instances.h). */
#ifndef SERVER_INSTANCES_INTERNAL_H
#define SERVER_INSTANCES_INTERNAL_H

#include <pthread.h>

extern pthread_mutex_t inst_writer;

#endif
