/* server/sim_guard.c: an instance that goes non-finite anyway (poisoned here through
 * core's private layout, since no valid definition does it) is found whether it is
 * watched, unwatched or read over REST; it is reset to rest, counted, announced with a
 * RESET event, and no record or REST frame ever carries a NaN. */
#define _GNU_SOURCE /* server/pool.c, included below, binds threads to CPUs */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../../server/cmdq.c"
#include "../../server/driver.c"
#include "../../server/frame_ring.c"
#include "../../server/jutil.c"
#include "../../server/metrics.c"
#include "../../server/pool.c"
#include "../../server/record.c"
#include "../../server/record_disk.c"
#include "../../server/sim.c"
#include "../../server/sim_record.c"
#include "../../server/sim_frame.c"
#include "../../server/sim_guard.c"
#include "../../server/sim_wind.c"
#include "../../server/sim_touch.c"
#include "../../server/sim_grab.c"
#include "../../server/interact.c"
#include "testdef.h"
#include "world_internal.h"

/* log.c's place: counts the lines about non-finite instances, keeps the newest. */
int log_min_level = LOG_WARN;
static int nonfinite_lines;
static char last_line[512];
void log_emit(int level, const char *file, const char *fmt, ...)
{
	(void)level, (void)file;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(last_line, sizeof last_line, fmt, ap);
	va_end(ap);
	nonfinite_lines += strstr(last_line, "non-finite") != NULL;
}

typedef struct fx_t {
	cmdq_t *q;
	frame_ring_t *ring;
	sim_t *s;
	int64_t deadline;
} fx_t;

static int setup(void **state)
{
	fx_t *f = calloc(1, sizeof *f);
	sim_config_t cfg = {.tick_hz = 60, .substeps = 4, .workers = 1, .keyframe_interval = 60};
	f->q = cmdq_create(64);
	f->ring = frame_ring_create(64);
	f->s = sim_create(&cfg, f->q, f->ring);
	assert_non_null(f->s);
	driver_t none;
	memset(&none, 0, sizeof none);
	for (uint64_t id = 1; id <= 3; id++) {
		pt_instance_def d;
		tdef_init(&d);
		d.prewarm_s = 0;
		/* Nonlinear stretch: the exact mode's follow-the-leader pass re-derives every point
		 * from its parent and would heal the poison by itself. */
		d.verlet.stretch = PT_STRETCH_NONLINEAR;
		assert_int_equal(sim_preload(f->s, id, &d, &none, NULL), 0);
		pt_instance_def_fini(&d);
	}
	f->deadline = sim_mono_ns();
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	fx_t *f = *state;
	frame_event_t *ev;
	int nev;
	frame_set_t *fs = frame_ring_acquire(f->ring, NULL, &ev, &nev);
	for (int i = 0; i < nev; i++) {
		meta_unref(ev[i].meta);
		meta_unref(ev[i].old);
	}
	frame_ring_release(f->ring, fs);
	sim_destroy(f->s);
	frame_ring_destroy(f->ring);
	cmdq_destroy(f->q);
	free(f);
	return 0;
}

static void tick(fx_t *f)
{
	f->deadline += 1000000000 / 60;
	tick_once(f->s, f->deadline, 1000000000 / 60);
}

/* Makes one point of instance id NaN in core's point pool. */
static void poison(fx_t *f, uint64_t id)
{
	int slot = sim_slot_of(f->s, id);
	pt_world *w = f->s->world;
	const pt_inst *in = &w->inst[w->slot_dense[f->s->inst[slot].pid.index - 1]];
	w->x[in->offset + in->npoints - 1] = NAN;
}

static int finite_now(fx_t *f, uint64_t id)
{
	static pt_vec3 p[PT_MAX_JOINTS];
	int slot = sim_slot_of(f->s, id);
	int n = pt_world_read_points(f->s->world, f->s->inst[slot].pid, p, PT_MAX_JOINTS);
	return n > 0 && sim_points_finite(p, n);
}

/* Counts RESET events for id queued in the ring since the last call. */
static int resets_of(fx_t *f, uint64_t id)
{
	frame_event_t *ev;
	int nev, n = 0;
	frame_set_t *fs = frame_ring_acquire(f->ring, NULL, &ev, &nev);
	for (int i = 0; i < nev; i++) {
		n += ev[i].kind == PTP_EVENT_RESET && ev[i].meta->id == id;
		meta_unref(ev[i].meta);
		meta_unref(ev[i].old);
	}
	frame_ring_release(f->ring, fs);
	return n;
}

static void test_points_finite(void **state)
{
	(void)state;
	pt_vec3 p[3] = {{1, 2, 3}, {-1e30f, 0, 1e-45f}, {0, 0, 0}};
	assert_true(sim_points_finite(p, 3));
	p[1].y = INFINITY;
	assert_false(sim_points_finite(p, 3));
	p[1].y = -NAN;
	assert_false(sim_points_finite(p, 3));
	assert_true(sim_points_finite(p, 1));
}

static void test_unwatched_instance_is_found_by_the_sweep(void **state)
{
	fx_t *f = *state;
	tick(f);
	resets_of(f, 2);
	uint64_t before = metrics_get(&metrics.instances_nonfinite_resets);
	poison(f, 2);
	assert_false(finite_now(f, 2));
	/* Three slots at 60 Hz: the sweep reads one a tick, so all within three ticks; one
	 * more publishes the RESET event. */
	for (int i = 0; i < 4; i++)
		tick(f);
	assert_true(finite_now(f, 2));
	assert_int_equal(metrics_get(&metrics.instances_nonfinite_resets), before + 1);
	assert_int_equal(resets_of(f, 2), 1);
	assert_true(finite_now(f, 1) && finite_now(f, 3));
}

static void test_watched_instance_is_never_encoded_non_finite(void **state)
{
	fx_t *f = *state;
	int slot = sim_slot_of(f->s, 3);
	frame_ring_watch(f->ring, slot, FRAME_CLASSIC, 0, 1000000);
	tick(f);
	resets_of(f, 3);
	uint64_t before = metrics_get(&metrics.instances_nonfinite_resets);
	poison(f, 3);
	tick(f);
	/* The tick that found it published no record for it, and reset it afterwards. */
	frame_event_t *ev;
	int nev;
	frame_set_t *fs = frame_ring_acquire(f->ring, NULL, &ev, &nev);
	assert_int_equal(fs->entries[slot].rec[FRAME_CLASSIC][0].len, 0);
	for (int i = 0; i < nev; i++) {
		meta_unref(ev[i].meta);
		meta_unref(ev[i].old);
	}
	frame_ring_release(f->ring, fs);
	assert_true(finite_now(f, 3));
	assert_int_equal(metrics_get(&metrics.instances_nonfinite_resets), before + 1);
	tick(f);
	fs = frame_ring_acquire(f->ring, NULL, &ev, &nev);
	assert_true(fs->entries[slot].rec[FRAME_CLASSIC][0].len > 0); /* encoded again, from rest */
	frame_ring_release(f->ring, fs);
	for (int i = 0; i < nev; i++) { /* the events' references are ours */
		meta_unref(ev[i].meta);
		meta_unref(ev[i].old);
	}
}

static void test_rest_frame_read_gets_the_rest_pose(void **state)
{
	fx_t *f = *state;
	tick(f);
	uint64_t before = metrics_get(&metrics.instances_nonfinite_resets);
	poison(f, 1);
	cmd_t c;
	memset(&c, 0, sizeof c);
	c.kind = CMD_FRAME;
	c.id = 1;
	assert_int_equal(apply(f->s, &c), CMD_OK);
	assert_true(c.frame.n > 0);
	assert_true(sim_points_finite(c.frame.xyz, c.frame.n));
	free(c.frame.xyz);
	assert_int_equal(metrics_get(&metrics.instances_nonfinite_resets), before + 1);
}

static void test_log_is_rate_limited_with_a_count(void **state)
{
	fx_t *f = *state;
	tick(f);
	int lines = nonfinite_lines;
	for (int i = 0; i < 5; i++) {
		poison(f, 2);
		for (int t = 0; t < 3; t++)
			tick(f);
	}
	assert_true(finite_now(f, 2));
	assert_int_equal(nonfinite_lines, lines + 1); /* one line for five resets in 0.1 s */
	f->s->guard_logged_ns -= 2000000000LL;          /* a second later: */
	poison(f, 2);
	for (int t = 0; t < 3; t++)
		tick(f);
	assert_int_equal(nonfinite_lines, lines + 2);
	assert_non_null(strstr(last_line, "(5 such resets since the last report)"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_points_finite),
	    cmocka_unit_test_setup_teardown(test_unwatched_instance_is_found_by_the_sweep, setup,
	                                    teardown),
	    cmocka_unit_test_setup_teardown(test_watched_instance_is_never_encoded_non_finite,
	                                    setup, teardown),
	    cmocka_unit_test_setup_teardown(test_rest_frame_read_gets_the_rest_pose, setup,
	                                    teardown),
	    cmocka_unit_test_setup_teardown(test_log_is_rate_limited_with_a_count, setup, teardown),
	};
	return cmocka_run_group_tests_name("sim_guard", tests, NULL, NULL);
}
