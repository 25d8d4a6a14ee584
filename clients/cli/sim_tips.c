/* Tip figures for `ponytail sim --summary` (see sim_tips.h). */
#include <math.h>
#include <string.h>

#include "sim_tips.h"

#define PI 3.14159265358979323846

static int finite3(const double v[3])
{
	return isfinite(v[0]) && isfinite(v[1]) && isfinite(v[2]);
}

static void sums_add(sim_tip_sums *u, const double d[3])
{
	if (u->n == 0)
		memcpy(u->ref, d, sizeof u->ref);
	for (int i = 0; i < 3; i++) {
		double e = d[i] - u->ref[i];
		u->s[i] += e;
		u->ss += e * e;
	}
	u->n++;
}

void sim_tips_init(sim_tips *t, int strands, double tick_hz, const double (*initial)[3])
{
	memset(t, 0, sizeof *t);
	t->strands = strands;
	t->tick_hz = tick_hz;
	double cap = ceil(10.0 * tick_hz) + 1;
	t->decay_cap = cap < SIM_DECAY_MAX ? (int)cap : SIM_DECAY_MAX;
	memcpy(t->prev, initial, sizeof t->prev[0] * (size_t)strands);
}

void sim_tips_add(sim_tips *t, int moving, const double (*tips)[3])
{
	for (int s = 0; s < t->strands; s++) {
		if (!finite3(tips[s])) {
			t->nonfinite = 1;
			continue;
		}
		if (finite3(t->prev[s])) {
			double dx = tips[s][0] - t->prev[s][0], dy = tips[s][1] - t->prev[s][1],
			       dz = tips[s][2] - t->prev[s][2];
			t->max_speed = fmax(t->max_speed, sqrt(dx * dx + dy * dy + dz * dz) * t->tick_hz);
		}
		if (moving || t->started)
			sums_add(&t->run[s], tips[s]);
	}
	memcpy(t->prev, tips, sizeof t->prev[0] * (size_t)t->strands);
	if (moving) {
		t->started = 1;
		memcpy(t->moving, t->run, sizeof t->moving[0] * (size_t)t->strands);
		memcpy(t->at_stop, tips, sizeof t->at_stop[0] * (size_t)t->strands);
		t->decay_n = 0;
		return;
	}
	if (!t->started)
		return;
	if (t->decay_n == 0) {
		t->decay_strand = sim_tips_widest(t);
		memcpy(t->decay[0], t->at_stop[t->decay_strand], sizeof t->decay[0]);
		t->decay_n = 1;
	}
	if (t->decay_n < t->decay_cap)
		memcpy(t->decay[t->decay_n++], tips[t->decay_strand], sizeof t->decay[0]);
}

double sim_tips_sigma(const sim_tips *t, int s)
{
	const sim_tip_sums *u = &t->moving[s];
	if (u->n == 0)
		return -1;
	double n = (double)u->n, m2 = 0;
	for (int i = 0; i < 3; i++)
		m2 += (u->s[i] / n) * (u->s[i] / n);
	double var = u->ss / n - m2;
	return var > 0 ? sqrt(var) : 0;
}

int sim_tips_widest(const sim_tips *t)
{
	int best = 0;
	for (int s = 1; s < t->strands; s++)
		if (sim_tips_sigma(t, s) > sim_tips_sigma(t, best))
			best = s;
	return best;
}

int sim_tips_fit(const sim_tips *t, double *zeta)
{
	int n = t->decay_n;
	if (!t->started || t->nonfinite || n < 3)
		return 0;
	/* Projection on the direction of the largest excursion from the rest position. */
	const double *rest = t->decay[n - 1];
	double dir[3] = {0, 0, 0}, far = 0;
	for (int k = 0; k < n; k++) {
		double e[3] = {t->decay[k][0] - rest[0], t->decay[k][1] - rest[1],
		               t->decay[k][2] - rest[2]};
		double len = sqrt(e[0] * e[0] + e[1] * e[1] + e[2] * e[2]);
		if (len > far) {
			far = len;
			for (int i = 0; i < 3; i++)
				dir[i] = e[i] / len;
		}
	}
	if (far < SIM_DECAY_FLOOR)
		return 0;
	/* Turning points: the extreme of each half-cycle; a half-cycle whose extreme is the
	 * first frame was cut by the stop and is not one. The first 64 are kept: a decay that
	 * can be fitted has far fewer above the floor. */
	double amp[64];
	int count = 0, best = -1, extreme_k = -1;
	double extreme = 0;
	for (int k = 0; k <= n; k++) {
		double u = 0;
		if (k < n)
			for (int i = 0; i < 3; i++)
				u += (t->decay[k][i] - rest[i]) * dir[i];
		int flips = k == n || (u != 0 && extreme != 0 && (u > 0) != (extreme > 0));
		if (flips && extreme_k > 0 && count < 64) {
			if (best < 0 || fabs(extreme) > fabs(amp[best]))
				best = count;
			amp[count++] = extreme;
		}
		if (flips)
			extreme = 0, extreme_k = -1;
		if (k < n && fabs(u) > fabs(extreme))
			extreme = u, extreme_k = k;
	}
	if (best < 0)
		return 0;
	/* Least squares of ln|a_j| on j over the turning points from the largest on, while
	 * they shrink: below ~20 um float rounding keeps a strand wiggling for good. */
	double sj = 0, sy = 0, sjj = 0, sjy = 0;
	int m = 0;
	for (int j = best; j < count && fabs(amp[j]) >= SIM_DECAY_FLOOR &&
	                   (m == 0 || fabs(amp[j]) < fabs(amp[j - 1]));
	     j++, m++) {
		double y = log(fabs(amp[j]));
		sj += m, sy += y, sjj += (double)m * m, sjy += m * y;
	}
	if (m < 2)
		return 0;
	double slope = (m * sjy - sj * sy) / (m * sjj - sj * sj), delta = -2 * slope;
	if (!(delta > 0))
		return 0;
	*zeta = delta / sqrt(4 * PI * PI + delta * delta);
	return m;
}
