/* One VMC packet into a vmc_state (see vmc.h). liblo decodes each OSC message (types,
 * alignment, byte order); the bundle framing around them is walked here, so that a
 * truncated or lying bundle is counted as malformed while the messages before the bad
 * element still count, and so that the raw bytes stay available for --forward. */
#include <lo/lo.h>
#include <math.h>
#include <string.h>
#include <strings.h>

#include "vmc.h"

enum { MAX_DEPTH = 8 };

static uint32_t be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* "sfffffff" at least (name, position, rotation; later VMC versions append scale and
 * offset, which are ignored); 'd' is accepted for 'f'. 0 ok, -1 wrong types, -2 a
 * non-finite number or a rotation that is not one. */
static int read_pose(const char *types, lo_arg **argv, const char **name, vmc_xf *u)
{
	if (strlen(types) < 8 || types[0] != 's')
		return -1;
	double v[7];
	for (int i = 0; i < 7; i++) {
		char t = types[1 + i];
		if (t != 'f' && t != 'd')
			return -1;
		/* liblo's arguments point into the OSC data, 4-byte aligned: read them with memcpy
		 * (the union lo_arg wants 8 bytes, as UBSan says). */
		if (t == 'f') {
			float f;
			memcpy(&f, argv[1 + i], sizeof f);
			v[i] = f;
		} else {
			memcpy(&v[i], argv[1 + i], sizeof v[i]);
		}
		if (!isfinite(v[i]))
			return -2;
	}
	double n2 = v[3] * v[3] + v[4] * v[4] + v[5] * v[5] + v[6] * v[6];
	if (n2 < 0.25 || n2 > 4)
		return -1; /* the client library's rule for a head rotation */
	double inv = 1 / sqrt(n2);
	*name = (const char *)argv[0];
	for (int i = 0; i < 3; i++)
		u->p[i] = v[i];
	for (int i = 0; i < 4; i++)
		u->q[i] = v[3 + i] * inv;
	return 0;
}

/* One OSC message. 1 used for the pose, 0 not, -1 malformed. */
static int message(vmc_state *s, void *data, size_t n, int64_t now_us)
{
	int res = 0;
	lo_message m = lo_message_deserialise(data, n, &res);
	if (!m) {
		s->malformed++;
		return -1;
	}
	s->messages++;
	const char *path = data; /* the first OSC string, validated by the decoder */
	int root = strcmp(path, "/VMC/Ext/Root/Pos") == 0;
	int bone = strcmp(path, "/VMC/Ext/Bone/Pos") == 0;
	int tra = strcmp(path, "/VMC/Ext/Tra/Pos") == 0;
	int used = 0;
	if (root || bone || tra) {
		const char *name = NULL;
		vmc_xf u;
		int rc = read_pose(lo_message_get_types(m), lo_message_get_argv(m), &name, &u);
		if (rc == -1) {
			s->malformed++;
		} else if (rc == -2) {
			s->nonfinite++;
		} else if (root) {
			s->root = vmc_from_unity(u);
			s->have_root = 1;
			used = 1;
		} else if (tra) {
			if (strcasecmp(name, "Head") == 0) {
				s->tracker = vmc_from_unity(u);
				s->have_tracker = 1;
				s->tracker_us = now_us;
				used = 1;
			}
		} else {
			for (int b = 0; b < VMC_NBONES && !used; b++)
				if (strcmp(name, vmc_bone_names[b]) == 0) {
					s->bone[b] = vmc_from_unity(u);
					s->have_bone |= 1ull << b;
					used = 1;
				}
		}
	} else if (strncmp(path, "/VMC/", 5) == 0) {
		s->ignored++;
	} else {
		s->unknown++;
	}
	lo_message_free(m);
	if (used > 0)
		s->changed = 1;
	return used;
}

/* A bundle's elements: "#bundle\0", an 8-byte time tag, then (size, element) pairs. The
 * time tag is not honoured: VMC senders stamp "immediately" or their own clock. */
static int bundle(vmc_state *s, unsigned char *d, size_t n, int depth, int64_t now_us)
{
	if (n < 16 || depth > MAX_DEPTH) {
		s->malformed++;
		return -1;
	}
	s->bundles++;
	int used = 0;
	for (size_t at = 16; at < n;) {
		if (n - at < 4) {
			s->malformed++;
			return -1;
		}
		uint32_t len = be32(d + at);
		at += 4;
		if (len == 0 || len % 4 != 0 || len > n - at) {
			s->malformed++;
			return -1;
		}
		int rc = len >= 8 && memcmp(d + at, "#bundle", 8) == 0
		             ? bundle(s, d + at, len, depth + 1, now_us)
		             : message(s, d + at, len, now_us);
		if (rc < 0)
			return -1;
		used += rc;
		at += len;
	}
	return used;
}

int vmc_feed(vmc_state *s, void *data, size_t n, int64_t now_us)
{
	s->packets++;
	unsigned char *d = data;
	if (n >= 8 && memcmp(d, "#bundle", 8) == 0)
		return bundle(s, d, n, 1, now_us);
	return message(s, d, n, now_us);
}
