/* `ponytail sim --summary`'s tip figures, the mass-spring article's realism measures, all
 * taken in the head's frame (tip position q^-1 (tip - head position)), so that a strand
 * carried rigidly by the head scores zero:
 *   - tip-displacement sigma: the RMS distance of the tip from its mean position over the
 *     moving part (the first tick whose head pose differs from the one before, through
 *     the last such tick): sqrt(mean |d - mean d|^2), d the head-frame tip position;
 *   - peak tip speed: max |d_k - d_(k-1)| * tick_hz over every tick;
 *   - damping ratio: fitted to the tip's free decay after the head stops (sim_tips_fit).
 * Constant memory: sums per strand, and up to SIM_DECAY_MAX frames of one tip after the
 * last head movement. */
#ifndef PONYTAIL_CLI_SIM_TIPS_H
#define PONYTAIL_CLI_SIM_TIPS_H

#include "ponytail/instance.h"

#define SIM_DECAY_MAX 10000 /* frames kept after the stop: 10 s at up to 1000 Hz */
#define SIM_DECAY_FLOOR 5e-5 /* m: turning points smaller than this are not fitted */

typedef struct sim_tip_sums {
	long n;
	double ref[3], s[3], ss; /* sums of d - ref and |d - ref|^2 (ref: first sample) */
} sim_tip_sums;

typedef struct sim_tips {
	int strands, started, nonfinite;
	double tick_hz, max_speed;
	double prev[PT_MAX_STRANDS][3];     /* head-frame tips of the previous frame */
	sim_tip_sums run[PT_MAX_STRANDS];    /* since the head first moved */
	sim_tip_sums moving[PT_MAX_STRANDS]; /* the same, up to the last moving tick */
	double at_stop[PT_MAX_STRANDS][3];  /* head-frame tips at the last moving tick */
	int decay_strand, decay_n, decay_cap;
	double decay[SIM_DECAY_MAX][3]; /* that strand's tip from the last moving tick on */
} sim_tips;

/* `initial`: the head-frame tips right after creation. */
void sim_tips_init(sim_tips *t, int strands, double tick_hz, const double (*initial)[3]);

/* One frame: `moving` when the head pose differs from the previous tick's. */
void sim_tips_add(sim_tips *t, int moving, const double (*tips)[3]);

/* Tip-displacement sigma of strand s over the moving part, m; -1 if the head never moved. */
double sim_tips_sigma(const sim_tips *t, int s);

/* The strand whose tip moved most (largest sigma; its decay is the one recorded). */
int sim_tips_widest(const sim_tips *t);

/* Damping ratio of the widest strand's decay after the head stops. The recorded tip
 * positions minus the last one (the rest position) are projected on the direction of
 * their largest excursion; in each stretch of one sign (a half-cycle) the extreme value is
 * a turning point a_j. From the largest turning point that is not the first frame on,
 * while |a_j| >= SIM_DECAY_FLOOR and shrinks: the least-squares slope of ln|a_j| against j is -delta/2
 * (delta: the logarithmic decrement per full period), zeta = delta / sqrt(4 pi^2 +
 * delta^2). Returns the number of turning points used and sets *zeta when it is at least
 * 2 and the amplitude falls; else returns 0 (no fit: the head never stopped, the tip did
 * not overshoot, or a coordinate was not finite). */
int sim_tips_fit(const sim_tips *t, double *zeta);

#endif
