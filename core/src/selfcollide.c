/* Spatial hash for self-collision.
 *
 * Cells are cubes of the largest particle diameter, so any touching pair lies in the
 * same or an adjacent cell: each point looks at 27 cells. The table has a power-of-two
 * size of at least twice the point count; chains are singly linked through `next`.
 * Storage (allocated once at create): heads[T], next[n], strand_of[n].
 */
#include <math.h>
#include <stdlib.h>

#include "selfcollide.h"

static int table_size(int n)
{
	int t = 16;
	while (t < 2 * n)
		t *= 2;
	return t;
}

int pt_self_collide_init(pt_inst *in, int on)
{
	in->self_scratch = NULL;
	if (!on)
		return 1;
	int n = in->npoints, t = table_size(n);
	in->self_scratch = malloc(sizeof(int) * (size_t)(t + 2 * n));
	if (!in->self_scratch)
		return 0;
	int *strand_of = in->self_scratch + t + n;
	for (int s = 0; s < in->strand_count; s++)
		for (int j = 0; j < in->strands[s].points; j++)
			strand_of[in->strands[s].first + j] = s;
	return 1;
}

void pt_self_collide_free(pt_inst *in)
{
	free(in->self_scratch);
	in->self_scratch = NULL;
}

static uint32_t cell_hash(int cx, int cy, int cz)
{
	return (uint32_t)cx * 73856093u ^ (uint32_t)cy * 19349663u ^ (uint32_t)cz * 83492791u;
}

void pt_self_collide(pt_world *w, pt_inst *in)
{
	int n = in->npoints, t = table_size(n), off = in->offset;
	int *heads = in->self_scratch, *next = heads + t, *strand_of = next + n;
	float rmax = 0.0f;
	for (int s = 0; s < in->strand_count; s++)
		rmax = fmaxf(rmax, in->strands[s].radius);
	if (!(rmax > 0.0f))
		return;
	float inv_cell = 1.0f / (2.0f * rmax);
	for (int i = 0; i < t; i++)
		heads[i] = -1;
	for (int i = 0; i < n; i++) {
		int k = off + i;
		uint32_t hsh = cell_hash((int)floorf(w->x[k] * inv_cell), (int)floorf(w->y[k] * inv_cell),
					 (int)floorf(w->z[k] * inv_cell));
		int c = (int)(hsh & (uint32_t)(t - 1));
		next[i] = heads[c];
		heads[c] = i;
	}
	for (int i = 0; i < n; i++) {
		int a = off + i;
		if (w->w[a] == 0.0f)
			continue;
		int cx = (int)floorf(w->x[a] * inv_cell), cy = (int)floorf(w->y[a] * inv_cell),
		    cz = (int)floorf(w->z[a] * inv_cell);
		float ra = in->strands[strand_of[i]].radius;
		for (int dz = -1; dz <= 1; dz++)
			for (int dy = -1; dy <= 1; dy++)
				for (int dx = -1; dx <= 1; dx++) {
					uint32_t hsh = cell_hash(cx + dx, cy + dy, cz + dz);
					for (int j = heads[hsh & (uint32_t)(t - 1)]; j >= 0; j = next[j]) {
						/* Each unordered pair once; skip chain neighbours. */
						if (j <= i || (strand_of[j] == strand_of[i] && j - i <= 2))
							continue;
						int b = off + j;
						float ex = w->x[b] - w->x[a], ey = w->y[b] - w->y[a],
						      ez = w->z[b] - w->z[a];
						float d2 = ex * ex + ey * ey + ez * ez;
						float rr = ra + in->strands[strand_of[j]].radius;
						if (!(d2 < rr * rr) || !(d2 > 1e-20f))
							continue;
						float d = sqrtf(d2), wa = w->w[a], wb = w->w[b];
						float f = (rr - d) / (d * (wa + wb));
						w->x[a] -= ex * f * wa, w->y[a] -= ey * f * wa, w->z[a] -= ez * f * wa;
						w->x[b] += ex * f * wb, w->y[b] += ey * f * wb, w->z[b] += ez * f * wb;
					}
				}
	}
}
