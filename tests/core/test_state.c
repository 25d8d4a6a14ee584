/* An instance's state as bytes (pt_world_state_save / _load) and its hash
 * (pt_world_state_hash), issue 39 item 1 and the snapshot a recording starts from.
 *
 * The claim is exact: an instance loaded with a snapshot steps bit for bit as the one it
 * was saved from, whatever its own state was before, on either kernel. So the cases run a
 * source instance for a while (head and bone poses, an extrapolated head with velocities,
 * a teleport), save it, load the bytes into a fresh instance of the same definition that
 * stood somewhere else, and drive both with the same inputs: the hash and every
 * position's bits must agree after every tick. They run on the whole avatar (40 chains on
 * 8 bones, a branch, colliders on the body: spring bone, at the rate substep, at the frame
 * rate with center = head, and with three-vrm's lengths, whose tails are state of their
 * own) and on a verlet ponytail. The hash must also tell apart what differs: one bit of
 * one point, a parameter that changes no position, a bone pose not yet used.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "avatar_scene.h"
#include "ponytail/world.h"
#include "testdef.h"

enum { WARM = 40, FOLLOW = 60 };

typedef enum kind { AVATAR_SUBSTEP, AVATAR_FRAME_CENTER, AVATAR_THREEVRM, PONYTAIL } kind;

static void make_def(pt_instance_def *d, kind k)
{
	if (k == PONYTAIL) {
		tdef_init(d);
		tdef_strands(d, 3);
		for (int s = 0; s < 3; s++) {
			d->strands[s].anchor = pt_v3(-0.05f + 0.05f * (float)s, 0.06f, -0.08f);
			d->strands[s].direction = pt_v3(0.2f * (float)(s - 1), -1.0f, -0.3f);
			d->strands[s].points = 12;
			d->strands[s].segment_length = 0.03f;
		}
		return;
	}
	avatar_scene_def(d, 4);
	if (k == AVATAR_SUBSTEP)
		d->springbone.rate = PT_SPRINGBONE_RATE_SUBSTEP;
	if (k == AVATAR_FRAME_CENTER) {
		d->springbone.rate = PT_SPRINGBONE_RATE_FRAME;
		d->springbone.center_head = 1;
	}
	if (k == AVATAR_THREEVRM)
		d->springbone.length = PT_SPRINGBONE_LENGTH_THREEVRM;
}

/* The inputs of tick k (1-based): the avatar's motion (the ponytail gets its head), a
 * head with velocities at tick 10 (extrapolated for a few ticks), a keep-mode teleport
 * at tick 25. */
static void drive(pt_world *w, pt_id id, int k)
{
	pt_vec3 at = pt_v3(0.0f, 1.6f, k >= 25 ? 12.0f : 0.0f);
	assert_true(avatar_scene_drive(w, id, k / 60.0, 0.3, at));
	if (k == 10) {
		pt_pose head;
		assert_true(pt_world_get_head(w, id, &head));
		assert_true(pt_world_set_head_motion(w, id, head, pt_v3(0.8f, 0.1f, 0.0f),
		                                     pt_v3(0.0f, 3.0f, 0.5f), 0.004f));
	}
}

static pt_world *world(pt_kernel kernel)
{
	pt_world_def wd = pt_world_def_default();
	wd.kernel = kernel;
	pt_world *w = pt_world_create(&wd);
	assert_non_null(w);
	return w;
}

static void assert_same_points(const pt_world *a, pt_id ia, const pt_world *b, pt_id ib)
{
	static pt_vec3 pa[4096], pb[4096];
	int n = pt_world_read_points(a, ia, pa, 4096);
	assert_int_equal(pt_world_read_points(b, ib, pb, 4096), n);
	assert_memory_equal(pa, pb, (size_t)n * sizeof *pa);
}

static void continues(kind k, pt_kernel second)
{
	pt_instance_def d;
	make_def(&d, k);
	assert_true(pt_instance_validate(&d).ok);
	pt_world *a = world(PT_KERNEL_AUTO), *b = world(second);
	pt_pose head = {{0.0f, 1.6f, 0.0f}, {0.0f, 0.0f, 0.0f, 1.0f}};
	pt_id ia = pt_world_create_instance(a, &d, head);
	/* b's instance stands elsewhere, turned, and has moved: nothing of it may survive */
	pt_pose other = {{3.0f, 1.0f, -2.0f}, {0.0f, 0.3826834f, 0.0f, 0.9238795f}};
	pt_id ib = pt_world_create_instance(b, &d, other);
	for (int t = 1; t <= 5; t++) {
		pt_world_set_head(b, ib, other);
		pt_world_step(b, 1.0f / 60.0f, 4);
	}
	for (int t = 1; t <= WARM; t++) {
		drive(a, ia, t);
		pt_world_step(a, 1.0f / 60.0f, 4);
	}
	size_t n = pt_world_state_save(a, ia, NULL, 0);
	assert_true(n > 0);
	unsigned char *snap = malloc(n);
	assert_non_null(snap);
	assert_int_equal(pt_world_state_save(a, ia, snap, n), n);
	assert_true(pt_world_state_hash(a, ia) != pt_world_state_hash(b, ib));
	assert_int_equal(pt_world_state_load(b, ib, snap, n), 1);
	assert_true(pt_world_state_hash(a, ia) == pt_world_state_hash(b, ib));
	assert_same_points(a, ia, b, ib);
	for (int t = WARM + 1; t <= WARM + FOLLOW; t++) {
		drive(a, ia, t);
		drive(b, ib, t);
		pt_world_step(a, 1.0f / 60.0f, 4);
		pt_world_step(b, 1.0f / 60.0f, 4);
		assert_true(pt_world_state_hash(a, ia) == pt_world_state_hash(b, ib));
		assert_same_points(a, ia, b, ib);
	}
	assert_true(pt_world_teleports(a, ia) >= 1);
	free(snap);
	pt_world_destroy(a);
	pt_world_destroy(b);
	pt_instance_def_fini(&d);
}

static void continues_avatar_substep(void **st) { (void)st; continues(AVATAR_SUBSTEP, PT_KERNEL_AUTO); }
static void continues_avatar_frame_center(void **st) { (void)st; continues(AVATAR_FRAME_CENTER, PT_KERNEL_AUTO); }
static void continues_avatar_threevrm(void **st) { (void)st; continues(AVATAR_THREEVRM, PT_KERNEL_AUTO); }
static void continues_ponytail(void **st) { (void)st; continues(PONYTAIL, PT_KERNEL_AUTO); }
/* saved on one kernel, continued on the other: the plain-C lanes give the same bits */
static void continues_across_kernels(void **st)
{
	(void)st;
	continues(AVATAR_SUBSTEP, PT_KERNEL_SCALAR);
	continues(PONYTAIL, PT_KERNEL_SCALAR);
}

/* A snapshot of the wrong size, version or shape is refused and changes nothing. */
static void load_refuses(void **st)
{
	(void)st;
	pt_instance_def d, small;
	make_def(&d, AVATAR_SUBSTEP);
	make_def(&small, PONYTAIL);
	pt_world *w = world(PT_KERNEL_AUTO);
	pt_pose head = {{0.0f, 1.6f, 0.0f}, {0.0f, 0.0f, 0.0f, 1.0f}};
	pt_id ia = pt_world_create_instance(w, &d, head);
	pt_id ip = pt_world_create_instance(w, &small, head);
	for (int t = 1; t <= 5; t++) {
		drive(w, ia, t);
		drive(w, ip, t);
		pt_world_step(w, 1.0f / 60.0f, 4);
	}
	size_t n = pt_world_state_save(w, ia, NULL, 0);
	unsigned char *snap = malloc(n);
	assert_non_null(snap);
	pt_world_state_save(w, ia, snap, n);
	uint64_t ha = pt_world_state_hash(w, ia), hp = pt_world_state_hash(w, ip);
	assert_int_equal(pt_world_state_load(w, ip, snap, n), -1); /* another shape */
	assert_int_equal(pt_world_state_load(w, ia, snap, n - 1), -1); /* short */
	snap[4] ^= 0xff;                                               /* version */
	assert_int_equal(pt_world_state_load(w, ia, snap, n), -1);
	snap[4] ^= 0xff;
	assert_true(pt_world_state_hash(w, ia) == ha && pt_world_state_hash(w, ip) == hp);
	/* a stale id */
	pt_id gone = ip;
	assert_true(pt_world_destroy_instance(w, ip));
	assert_int_equal(pt_world_state_load(w, gone, snap, n), 0);
	assert_int_equal(pt_world_state_save(w, gone, NULL, 0), 0);
	assert_true(pt_world_state_hash(w, gone) == 0);
	free(snap);
	pt_world_destroy(w);
	pt_instance_def_fini(&d);
	pt_instance_def_fini(&small);
}

/* The hash sees one bit of one point, a parameter that moves nothing yet, a bone pose not
 * yet stepped; and the same inputs give the same hash in another world. */
static void hash_sees(void **st)
{
	(void)st;
	pt_instance_def d;
	make_def(&d, AVATAR_SUBSTEP);
	pt_world *a = world(PT_KERNEL_AUTO), *b = world(PT_KERNEL_AUTO);
	pt_pose head = {{0.0f, 1.6f, 0.0f}, {0.0f, 0.0f, 0.0f, 1.0f}};
	pt_id ia = pt_world_create_instance(a, &d, head), ib = pt_world_create_instance(b, &d, head);
	for (int t = 1; t <= 8; t++) {
		drive(a, ia, t), drive(b, ib, t);
		pt_world_step(a, 1.0f / 60.0f, 4), pt_world_step(b, 1.0f / 60.0f, 4);
	}
	uint64_t h = pt_world_state_hash(a, ia);
	assert_true(h == pt_world_state_hash(b, ib));
	size_t n = pt_world_state_save(a, ia, NULL, 0);
	unsigned char *snap = malloc(n);
	assert_non_null(snap);
	pt_world_state_save(a, ia, snap, n);
	/* the middle of the snapshot is inside the points' positions: one bit of one float */
	unsigned char *flip = malloc(n);
	assert_non_null(flip);
	memcpy(flip, snap, n);
	flip[n / 2] ^= 1;
	assert_int_equal(pt_world_state_load(b, ib, flip, n), 1);
	assert_true(pt_world_state_hash(b, ib) != h);
	assert_int_equal(pt_world_state_load(b, ib, snap, n), 1);
	assert_true(pt_world_state_hash(b, ib) == h);
	/* a parameter: drag on one joint; the points have not moved */
	pt_instance_def e;
	tdef_init(&e);
	tdef_copy(&e, &d);
	e.strands[3].joints[1].drag_force += 0.125f;
	assert_int_equal(pt_world_update_instance(b, ib, &e), 1);
	assert_same_points(a, ia, b, ib);
	assert_true(pt_world_state_hash(b, ib) != h);
	assert_int_equal(pt_world_update_instance(b, ib, &d), 1);
	assert_true(pt_world_state_hash(b, ib) == h);
	/* a bone pose, before the step that uses it */
	pt_pose arm = {{0.3f, 1.2f, 0.0f}, {0.0f, 0.0f, 0.3826834f, 0.9238795f}};
	assert_true(pt_world_set_bone_pose(b, ib, PT_BONE_LEFT_UPPER_ARM, arm));
	assert_true(pt_world_state_hash(b, ib) != h);
	free(flip);
	free(snap);
	pt_instance_def_fini(&e);
	pt_instance_def_fini(&d);
	pt_world_destroy(a);
	pt_world_destroy(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(continues_avatar_substep),
	    cmocka_unit_test(continues_avatar_frame_center),
	    cmocka_unit_test(continues_avatar_threevrm),
	    cmocka_unit_test(continues_ponytail),
	    cmocka_unit_test(continues_across_kernels),
	    cmocka_unit_test(load_refuses),
	    cmocka_unit_test(hash_sees),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
