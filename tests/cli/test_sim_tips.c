/* The tip figures behind `ponytail sim --summary` (sim_tips.c) on signals whose figures are
 * known in closed form: a damped cosine for the damping ratio, a square wave for sigma. The
 * CLI is not a library, so its one file is compiled in here. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <math.h>
#include <stdlib.h>

#include "../../clients/cli/sim_tips.c"

#define HZ 60.0

static sim_tips *fresh(int strands)
{
	static const double zero[PT_MAX_STRANDS][3];
	sim_tips *t = malloc(sizeof *t);
	assert_non_null(t);
	sim_tips_init(t, strands, HZ, zero);
	return t;
}

/* One strand: the head moves for 30 ticks, then the tip follows x(t) = A e^(-zeta w t)
 * cos(w_d t + 0.4) from the last moving tick on (zeta < 1), or A e^(-w t) (zeta >= 1: no
 * overshoot). Successive extremes of the cosine are pi / w_d apart and shrink by
 * e^(-zeta w pi / w_d) each: the fit must give zeta. */
static double fitted(double zeta, double w, int *turns)
{
	sim_tips *t = fresh(1);
	double d[1][3] = {{0, 0, 0}}, z = -1;
	for (int k = -29; k < 600; k++) {
		double s = (k < 0 ? 0 : k) / HZ;
		d[0][0] = zeta < 1 ? 0.05 * exp(-zeta * w * s) * cos(w * sqrt(1 - zeta * zeta) * s + 0.4)
		                   : 0.05 * exp(-w * s);
		sim_tips_add(t, k <= 0, (const double(*)[3])d);
	}
	*turns = sim_tips_fit(t, &z);
	free(t);
	return z;
}

static void test_damping_ratio(void **state)
{
	(void)state;
	int turns;
	double z = fitted(0.73, 6.5, &turns);
	assert_true(fabs(z - 0.73) < 0.005);
	assert_int_equal(turns, 2); /* 4.4 mm, 0.15 mm, then 5 um: below the floor */
	z = fitted(0.3, 6.5, &turns);
	assert_true(fabs(z - 0.3) < 0.005);
	assert_true(turns >= 6);
	z = fitted(0.05, 20, &turns);
	assert_true(fabs(z - 0.05) < 0.005);
	fitted(1.2, 6.5, &turns); /* overdamped: no overshoot, nothing to fit */
	assert_int_equal(turns, 0);
}

/* A square wave of +-0.1 m on x while the head moves has sigma 0.1 m whatever the offset;
 * ticks before the head first moves do not count. Peak speed: the 0.2 m jump per tick. */
static void test_sigma_and_speed(void **state)
{
	(void)state;
	sim_tips *t = fresh(2);
	double d[2][3] = {{5, 5, 5}, {0, 0, 0}};
	for (int k = 0; k < 10; k++) /* head still: the first strand far away */
		sim_tips_add(t, 0, (const double(*)[3])d);
	assert_true(sim_tips_sigma(t, 0) == -1);
	for (int k = 0; k < 100; k++) {
		d[0][0] = 0.3 + (k % 2 ? 0.1 : -0.1), d[0][1] = d[0][2] = -0.2;
		d[1][1] = 0.01 * (k % 2);
		sim_tips_add(t, 1, (const double(*)[3])d);
	}
	for (int k = 0; k < 10; k++) /* head still again: not part of sigma */
		sim_tips_add(t, 0, (const double(*)[3])d);
	assert_true(fabs(sim_tips_sigma(t, 0) - 0.1) < 1e-9);
	assert_true(fabs(sim_tips_sigma(t, 1) - 0.005) < 1e-9);
	assert_int_equal(sim_tips_widest(t), 0);
	/* The largest step is the jump from (5, 5, 5) at the first moving tick. */
	double jump = sqrt(4.8 * 4.8 + 2 * 5.2 * 5.2) * HZ;
	assert_true(fabs(t->max_speed - jump) < 1e-6);
	free(t);
}

static void test_nonfinite_tip_is_not_fitted(void **state)
{
	(void)state;
	sim_tips *t = fresh(1);
	double d[1][3] = {{0, 0, 0}}, z;
	sim_tips_add(t, 1, (const double(*)[3])d);
	d[0][0] = NAN;
	sim_tips_add(t, 0, (const double(*)[3])d);
	for (int k = 0; k < 100; k++) {
		d[0][0] = 0.05 * exp(-k / 30.0) * cos(k / 5.0);
		sim_tips_add(t, 0, (const double(*)[3])d);
	}
	assert_int_equal(sim_tips_fit(t, &z), 0);
	free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_damping_ratio),
	    cmocka_unit_test(test_sigma_and_speed),
	    cmocka_unit_test(test_nonfinite_tip_is_not_fitted),
	};
	return cmocka_run_group_tests_name("sim_tips", tests, NULL, NULL);
}
