/* The daemon's recordings (issue 39 item 2; the format: core/RECORDING.md).
 *
 * Per room, a ring of segments of about REC_SEGMENT_S seconds each. A segment begins with a
 * snapshot of every instance the room has at its first tick (definition and bit-exact
 * state), then holds every input core was given for the room's instances (creates,
 * updates, deletes, resets, head and bone poses with their exact ages) and, after every
 * tick, each instance's state hash. The oldest segments go once the rest still cover
 * --record-seconds, or when the room's segments hold more than --record-max-mb (a room
 * then keeps less time; the recording's header says which ticks it covers). A recording
 * of the last S seconds is the header and the segments from the newest one that began at
 * least S seconds ago (so it covers S to S + REC_SEGMENT_S seconds).
 *
 * Threading: the rec_room / rec_stage / rec_hash / rec_end_tick calls belong to the sim
 * thread, which writes a tick's records into each room's stage without a lock and moves
 * the stage into the room's newest segment at the tick's end under the recorder's mutex;
 * rec_read, from any thread, copies a recording under that mutex (memcpy of what the
 * answer holds: a 10-instance room's 300 s is a few MB, ~1 ms).
 */
#ifndef SERVER_RECORD_H
#define SERVER_RECORD_H

#include <stddef.h>
#include <stdint.h>

#include "ponytail/record.h"

enum { REC_SEGMENT_S = 10 };

typedef struct rec_t rec_t;
typedef struct rec_room_t rec_room_t;
typedef struct rec_disk_t rec_disk_t;

/* seconds 0: recording off (every call below then does nothing; rec_room answers NULL).
 * disk (borrowed, NULL for none): where every room's records go as well. */
rec_t *rec_create(int seconds, size_t max_bytes_per_room, int tick_hz, int substeps,
                  rec_disk_t *disk);
void rec_destroy(rec_t *r); /* NULL ok */

/* Sim thread. The room of that name (made on first use), one more instance in it; NULL
 * when recording is off or out of memory (that instance then goes unrecorded, logged). */
rec_room_t *rec_room_join(rec_t *r, const char *room);
/* One instance less in it. */
void rec_room_leave(rec_t *r, rec_room_t *rm);
/* Where this tick's records of the room go (pt_rec_put_*). NULL room: NULL. */
pt_rec_buf *rec_stage(rec_room_t *rm);
/* Instance id's state hash after this tick (call for every instance, in id order). */
void rec_hash(rec_room_t *rm, uint64_t id, uint64_t hash);
/* Closes tick `tick`: every room's STEP record, its stage into its segment, old segments
 * dropped. Returns 1 when some room began a new segment: its snapshots are due now
 * (rec_wants_snapshot), before the next tick's inputs. */
int rec_end_tick(rec_t *r, uint64_t tick);
int rec_wants_snapshot(const rec_room_t *rm);
/* The snapshots are written: the rooms go on recording inputs. */
void rec_snapshots_done(rec_t *r);

/* Any thread: the recording of the last `last_s` seconds of `room` into *out (malloc'ed,
 * the caller frees). Returns 0; -1 when the room has no instances (or recording is off);
 * -2 out of memory. */
int rec_read(rec_t *r, const char *room, double last_s, unsigned char **out, size_t *n);

/* record_disk.c, ponytaild --record DIR: a thread that appends each room's records to
 * DIR/ROOM.TICK.ptrec (ROOM with anything but [A-Za-z0-9._-] as %XX; TICK the first tick),
 * one file per room from its first segment on, a valid recording at every record's end
 * (its header's last tick 0: not known). If the disk falls 256 MiB behind, the rooms whose
 * records are dropped start a new file at their next segment. rec_disk_put is called
 * from the sim thread (under the recorder's mutex) with a room's bytes of one tick, which
 * begin a segment when `starts`. */
rec_disk_t *rec_disk_start(const char *dir, int tick_hz, int substeps, char *err, size_t errlen);
void rec_disk_put(rec_disk_t *d, const char *room, uint64_t first_tick, int starts,
                  const void *bytes, size_t n);
void rec_disk_stop(rec_disk_t *d); /* writes what is queued, closes, joins; NULL ok */

#endif
