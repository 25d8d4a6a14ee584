/* What `ponytail vmc` sends out besides poses: the status each second and --hair-out. */
#include <jansson.h>
#include <lo/lo.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>

#include "vmc_bridge.h"

void bridge_status_begin(bridge_t *b, int64_t now_us)
{
	b->t0_us = b->prev_us = now_us;
	hist_clear(&b->lat);
	hist_clear(&b->lat_all);
}

void bridge_status(bridge_t *b, int64_t now_us, int last)
{
	const vmc_state *s = &b->st;
	double dt = (double)(now_us - b->prev_us) * 1e-6;
	if (last)
		dt = (double)(now_us - b->t0_us) * 1e-6;
	uint64_t dp = last ? s->packets : s->packets - b->prev_packets;
	uint64_t dq = last ? b->poses : b->poses - b->prev_poses;
	double pps = dt > 0 ? (double)dp / dt : 0, qps = dt > 0 ? (double)dq / dt : 0;
	const hist_t *h = last ? &b->lat_all : &b->lat;
	uint64_t dropped = s->malformed + s->unknown + s->nonfinite + b->not_published;
	if (b->r.json) {
		json_t *j = json_pack(
		    "{s:b,s:f,s:I,s:f,s:f,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I}", "final",
		    last, "t", (double)(now_us - b->t0_us) * 1e-6, "instance", (json_int_t)b->id,
		    "packets_per_s", pps, "poses_per_s", qps, "packets", (json_int_t)s->packets,
		    "messages", (json_int_t)s->messages, "poses", (json_int_t)b->poses, "dropped",
		    (json_int_t)dropped, "malformed", (json_int_t)s->malformed, "unknown",
		    (json_int_t)s->unknown, "ignored", (json_int_t)s->ignored, "nonfinite",
		    (json_int_t)s->nonfinite, "not_published", (json_int_t)b->not_published,
		    "forwarded", (json_int_t)b->forwarded, "frames", (json_int_t)b->frames);
		json_object_set_new(j, "latency_ms",
		                    h->n ? json_pack("{s:f,s:f,s:I}", "p50", hist_pct(h, 50) / 1000,
		                                     "p99", hist_pct(h, 99) / 1000, "n",
		                                     (json_int_t)h->n)
		                         : json_null());
		json_object_set_new(j, "bones", json_integer(b->bones));
		if (b->have_head)
			json_object_set_new(j, "head",
			                    json_pack("{s:[f,f,f],s:[f,f,f,f]}", "p", b->head.p[0],
			                              b->head.p[1], b->head.p[2], "q", b->head.q[0],
			                              b->head.q[1], b->head.q[2], b->head.q[3]));
		if (b->fwd_fd >= 0)
			json_object_set_new(j, "forward_errors",
			                    json_integer((json_int_t)b->forward_errors));
		if (b->hair_fd >= 0) {
			json_object_set_new(j, "hair_bundles",
			                    json_integer((json_int_t)b->hair_bundles));
			json_object_set_new(j, "hair_errors",
			                    json_integer((json_int_t)b->hair_errors));
		}
		char *txt = json_dumps(j, JSON_COMPACT | JSON_REAL_PRECISION(7));
		if (txt)
			printf("%s\n", txt);
		fflush(stdout);
		free(txt);
		json_decref(j);
	} else {
		fprintf(
		    stderr,
		    "vmc%s: %.1f packets/s, %.1f poses/s, dropped %llu (malformed %llu, unknown "
		    "%llu, non-finite %llu, not sent %llu)",
		    last ? " (total)" : "", pps, qps, (unsigned long long)dropped,
		    (unsigned long long)s->malformed, (unsigned long long)s->unknown,
		    (unsigned long long)s->nonfinite, (unsigned long long)b->not_published);
		if (h->n)
			fprintf(stderr, ", latency p50 %.1f ms p99 %.1f ms", hist_pct(h, 50) / 1000,
			        hist_pct(h, 99) / 1000);
		else
			fprintf(stderr, ", latency -");
		fprintf(stderr, "\n");
	}
	b->prev_us = now_us;
	b->prev_packets = s->packets;
	b->prev_poses = b->poses;
	hist_clear(&b->lat);
}

/* Shortest rotation carrying unit a onto unit b, [x, y, z, w]. */
static void arc(const double a[3], const double b[3], double q[4])
{
	double d = a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
	double c[3] = {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2],
	               a[0] * b[1] - a[1] * b[0]};
	if (d < -0.999999) { /* opposite: half a turn about any axis normal to a */
		q[0] = 1, q[1] = q[2] = q[3] = 0;
		return;
	}
	double w = 1 + d, n = sqrt(c[0] * c[0] + c[1] * c[1] + c[2] * c[2] + w * w);
	q[0] = c[0] / n, q[1] = c[1] / n, q[2] = c[2] / n, q[3] = w / n;
}

/* One bundle per frame, a message per joint: "s<strand>j<joint>", the world position,
 * and the rotation carrying "hanging straight down" (-Y) onto the segment leaving the
 * joint (the last joint repeats its parent's), all in Unity's frame like VMC's own
 * bones. A receiver that wants them parent-relative chains them back itself. */
void vmc_hair_send(bridge_t *b, const ptp_shape_t *shape, const float *xyz, size_t n)
{
	lo_bundle bu = lo_bundle_new(LO_TT_IMMEDIATE);
	if (!bu)
		return;
	size_t at = 0;
	for (int s = 0; s < shape->strand_count; s++) {
		int np = shape->strands[s].points;
		if (at + (size_t)np > n)
			break;
		double q[4] = {0, 0, 0, 1};
		for (int j = 0; j < np; j++) {
			const float *p = xyz + 3 * (at + (size_t)j);
			if (j + 1 < np) {
				const float *nx = p + 3;
				double d[3] = {nx[0] - p[0], nx[1] - p[1], nx[2] - p[2]};
				double l = sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
				static const double down[3] = {0, -1, 0};
				if (l > 0) {
					for (int k = 0; k < 3; k++)
						d[k] /= l;
					arc(down, d, q);
				}
			}
			vmc_xf ours = {{p[0], p[1], p[2]}, {q[0], q[1], q[2], q[3]}};
			vmc_xf u = vmc_from_unity(ours); /* the map is its own inverse */
			char name[32];
			snprintf(name, sizeof name, "s%dj%d", s, j);
			lo_message m = lo_message_new();
			if (!m)
				continue;
			lo_message_add_string(m, name);
			for (int k = 0; k < 3; k++)
				lo_message_add_float(m, (float)u.p[k]);
			for (int k = 0; k < 4; k++)
				lo_message_add_float(m, (float)u.q[k]);
			lo_bundle_add_message(bu, "/VMC/Thru/ponytail/Bone/Pos", m);
		}
		at += (size_t)np;
	}
	size_t len = 0;
	void *data = lo_bundle_serialise(bu, NULL, &len);
	if (data && send(b->hair_fd, data, len, MSG_DONTWAIT) == (ssize_t)len)
		b->hair_bundles++;
	else
		b->hair_errors++;
	free(data);
	lo_bundle_free_recursive(bu);
}
