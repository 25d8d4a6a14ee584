/* ponytaild --record DIR: every room's recording written continuously to disk by a thread
 * of its own (record.h). */
#include "record.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"

enum { DISK_QUEUE_MAX = 256 << 20 }; /* bytes waiting for the disk before rooms drop some */

typedef struct disk_chunk_t {
	char room[PT_NAME_MAX];
	uint64_t first_tick; /* segment start, for a file that starts here */
	int starts;          /* the chunk begins a segment (its snapshots come first) */
	size_t n;
	struct disk_chunk_t *next;
	unsigned char bytes[];
} disk_chunk_t;

typedef struct file_t {
	char room[PT_NAME_MAX];
	FILE *f;
	int broken; /* a chunk was dropped: wait for the next segment to start a new file */
	struct file_t *next;
} file_t;

struct rec_disk_t {
	char dir[256];
	pt_rec_info info; /* tick rate and substeps for the headers */
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	disk_chunk_t *head, **tail;
	size_t queued;
	int stop;
	file_t *files; /* writer thread only */
};

/* The file name of a room: its bytes, with anything but [A-Za-z0-9._-] as %XX. */
static void file_name(char *out, size_t cap, const char *dir, const char *room, uint64_t tick)
{
	char safe[3 * PT_NAME_MAX + 1];
	size_t k = 0;
	for (const unsigned char *p = (const unsigned char *)room; *p && k + 4 < sizeof safe; p++) {
		if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
		    *p == '.' || *p == '_' || *p == '-')
			safe[k++] = (char)*p;
		else
			k += (size_t)snprintf(safe + k, sizeof safe - k, "%%%02X", *p);
	}
	safe[k] = '\0';
	snprintf(out, cap, "%s/%s%s.%llu.ptrec", dir, k ? "" : "%", safe, (unsigned long long)tick);
}

static void write_chunk(rec_disk_t *d, disk_chunk_t *c)
{
	file_t *f = d->files;
	while (f && strcmp(f->room, c->room) != 0)
		f = f->next;
	if (!f) {
		f = calloc(1, sizeof *f);
		if (!f)
			return;
		snprintf(f->room, sizeof f->room, "%s", c->room);
		f->broken = 1;
		f->next = d->files;
		d->files = f;
	}
	if (c->n == 0) { /* ticks were dropped: this file ends here */
		if (f->f)
			fclose(f->f);
		f->f = NULL;
		f->broken = 1;
		return;
	}
	if (f->broken && !c->starts)
		return; /* a file begins at a segment's snapshots */
	if (c->starts && (f->broken || !f->f)) {
		char path[512];
		file_name(path, sizeof path, d->dir, c->room, c->first_tick);
		if (f->f)
			fclose(f->f);
		f->f = fopen(path, "wb");
		if (!f->f) {
			LOG(LOG_ERROR, "record: %s: %s (room '%s' not written)", path, strerror(errno), c->room);
			f->broken = 1;
			return;
		}
		pt_rec_info info = d->info;
		info.first_tick = c->first_tick;
		snprintf(info.room, sizeof info.room, "%s", c->room);
		pt_rec_buf h = {0};
		pt_rec_put_header(&h, &info);
		size_t ok = h.failed ? 0 : fwrite(h.p, 1, h.n, f->f);
		pt_rec_buf_free(&h);
		f->broken = ok == 0;
	}
	if (f->f && !f->broken && (fwrite(c->bytes, 1, c->n, f->f) != c->n || fflush(f->f) != 0)) {
		LOG(LOG_ERROR, "record: room '%s': %s; a new file at its next segment", c->room,
		    strerror(errno));
		fclose(f->f);
		f->f = NULL;
		f->broken = 1;
	}
}

static void *writer(void *arg)
{
	rec_disk_t *d = arg;
	pthread_mutex_lock(&d->mu);
	for (;;) {
		while (!d->head && !d->stop)
			pthread_cond_wait(&d->cv, &d->mu);
		if (!d->head)
			break;
		disk_chunk_t *c = d->head;
		d->head = c->next;
		if (!d->head)
			d->tail = &d->head;
		d->queued -= c->n;
		pthread_mutex_unlock(&d->mu);
		write_chunk(d, c);
		free(c);
		pthread_mutex_lock(&d->mu);
	}
	pthread_mutex_unlock(&d->mu);
	return NULL;
}

rec_disk_t *rec_disk_start(const char *dir, int tick_hz, int substeps, char *err, size_t errlen)
{
	struct stat st;
	if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
		snprintf(err, errlen, "--record %s: %s", dir, strerror(errno));
		return NULL;
	}
	if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode) || access(dir, W_OK) != 0) {
		snprintf(err, errlen, "--record %s: not a directory this process can write", dir);
		return NULL;
	}
	rec_disk_t *d = calloc(1, sizeof *d);
	if (!d) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	snprintf(d->dir, sizeof d->dir, "%s", dir);
	d->info.tick_hz = tick_hz, d->info.substeps = substeps;
	d->tail = &d->head;
	pthread_mutex_init(&d->mu, NULL);
	pthread_cond_init(&d->cv, NULL);
	if (pthread_create(&d->th, NULL, writer, d) != 0) {
		snprintf(err, errlen, "cannot start the recording writer thread");
		free(d);
		return NULL;
	}
	return d;
}

void rec_disk_put(rec_disk_t *d, const char *room, uint64_t first_tick, int starts,
                  const void *bytes, size_t n)
{
	if (!d || n == 0)
		return;
	pthread_mutex_lock(&d->mu);
	int full = d->queued + n > DISK_QUEUE_MAX;
	pthread_mutex_unlock(&d->mu);
	disk_chunk_t *c = full ? NULL : malloc(sizeof *c + n);
	if (!c) {
		/* the file of that room cannot go on: the writer starts a new one at the room's
		 * next segment; marked by a chunk with nothing in it */
		LOG(LOG_WARN, "record: the disk is behind (or out of memory): room '%s' loses ticks",
		    room);
		c = calloc(1, sizeof *c);
		if (!c)
			return;
	} else {
		memcpy(c->bytes, bytes, n);
		c->n = n;
	}
	snprintf(c->room, sizeof c->room, "%s", room);
	c->first_tick = first_tick;
	c->starts = starts && c->n > 0;
	c->next = NULL;
	pthread_mutex_lock(&d->mu);
	*d->tail = c;
	d->tail = &c->next;
	d->queued += c->n;
	pthread_cond_signal(&d->cv);
	pthread_mutex_unlock(&d->mu);
}

void rec_disk_stop(rec_disk_t *d)
{
	if (!d)
		return;
	pthread_mutex_lock(&d->mu);
	d->stop = 1;
	pthread_cond_signal(&d->cv);
	pthread_mutex_unlock(&d->mu);
	pthread_join(d->th, NULL);
	for (file_t *f = d->files, *n; f; f = n) {
		n = f->next;
		if (f->f)
			fclose(f->f);
		free(f);
	}
	pthread_mutex_destroy(&d->mu);
	pthread_cond_destroy(&d->cv);
	free(d);
}
