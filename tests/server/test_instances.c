/* server/instances.c, the door: the error type maps to one HTTP status and one protocol
 * code per status; poses are admitted in one order (p, q, seq, exists, driver, rate) and
 * normalised; writes keep the store and the registry in step with the sim and roll back
 * when the sim refuses. The store, the command queue and the clock are stubs here, so
 * every failure can be provoked; the registry, tokens and documents are the real ones. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../../server/driver.c"
#include "../../server/frame_ring.c"
#include "../../server/instances.c"
#include "../../server/instdoc.c"
#include "../../server/interact.c"
#include "../../server/jutil.c"
#include "../../server/log.c"
#include "../../server/registry.c"
#include "../../server/token.c"

/* ---- stubs: the store, the command queue, the sim's clock ------------------------ */

metrics_t metrics; /* metrics.c's counters (its renderer is not needed here) */

static struct {
	int fail_insert, fail_update, fail_delete;
	uint64_t next_id;
	int inserts, updates, deletes;
	uint64_t last_deleted;
	char last_update[4096];
	cmd_kind_t pushed[16];
	int npushed;
	cmd_result_t result; /* what the "sim" answers every command with */
	int post_result;     /* cmdq_post_pose's return */
	pose_in_t posted;
	int nposted;
	int64_t now_ns;
} stub;

int store_insert(store_t *s, const char *doc, const uint8_t hash[TOKEN_HASH_LEN], int64_t now,
                 uint64_t *id)
{
	(void)s, (void)doc, (void)hash, (void)now;
	if (stub.fail_insert)
		return -1;
	stub.inserts++;
	*id = ++stub.next_id;
	return 0;
}

int store_update(store_t *s, uint64_t id, const char *doc, int64_t now)
{
	(void)s, (void)id, (void)now;
	stub.updates++;
	snprintf(stub.last_update, sizeof stub.last_update, "%s", doc);
	return stub.fail_update ? -1 : 0;
}

int store_delete(store_t *s, uint64_t id)
{
	(void)s;
	stub.deletes++;
	stub.last_deleted = id;
	return stub.fail_delete ? -1 : 0;
}

int store_load(store_t *s, store_row_fn fn, void *ctx)
{
	(void)s;
	return fn(ctx, 5, "{\"name\":\"kept\"}", (const uint8_t[TOKEN_HASH_LEN]){0}, 1, 2) ||
	               fn(ctx, 6, "{\"strands\":\"not a list\"}",
	                  (const uint8_t[TOKEN_HASH_LEN]){0}, 1, 2)
	           ? -1
	           : 0;
}

void cmdq_push(cmdq_t *q, cmd_t *cmd)
{
	(void)q;
	if (stub.npushed < 16)
		stub.pushed[stub.npushed++] = cmd->kind;
	cmd->result = stub.result;
}

cmd_result_t cmdq_wait(cmdq_t *q, cmd_t *cmd)
{
	(void)q;
	return cmd->result;
}

cmd_result_t cmdq_submit(cmdq_t *q, cmd_t *cmd)
{
	cmdq_push(q, cmd);
	return cmdq_wait(q, cmd);
}

int cmdq_post_pose(cmdq_t *q, const pose_in_t *p)
{
	(void)q;
	if (stub.post_result == 0) {
		stub.posted = *p;
		stub.nposted++;
	}
	return stub.post_result;
}

int64_t sim_mono_ns(void)
{
	return stub.now_ns;
}

static int preloaded;
int sim_preload(sim_t *s, uint64_t id, const pt_instance_def *def, const driver_t *driver,
                const interact_t *ia)
{
	(void)s, (void)id, (void)def, (void)driver, (void)ia;
	preloaded++;
	return 0;
}

/* ---- fixture --------------------------------------------------------------------- */

static config_t cfg;
static app_t app;

static int setup(void **state)
{
	(void)state;
	memset(&stub, 0, sizeof stub);
	memset(&metrics, 0, sizeof metrics);
	memset(&cfg, 0, sizeof cfg);
	cfg.max_instances = 3;
	cfg.max_points = 100;
	cfg.pose_rate = 40; /* burst: max(40 / 4, 8) = 10 */
	snprintf(cfg.admin_token, sizeof cfg.admin_token, "admin-secret");
	memset(&app, 0, sizeof app);
	app.cfg = &cfg;
	app.reg = registry_create();
	log_set_level(LOG_OFF); /* quiet */
	return app.reg ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	registry_destroy(app.reg);
	return 0;
}

static json_t *J(const char *text)
{
	json_error_t e;
	json_t *j = json_loads(text, 0, &e);
	if (!j)
		fail_msg("bad test JSON %s: %s", text, e.text);
	return j;
}

/* Creates an instance from `text`; returns its id (asserting success). */
static uint64_t create(const char *text, char token[TOKEN_LEN + 1])
{
	json_t *j = J(text);
	inst_view_t v;
	inst_err_t e;
	assert_int_equal(instances_create(&app, j, NULL, &v, &e), INST_OK);
	json_decref(j);
	if (token)
		memcpy(token, v.token, TOKEN_LEN + 1);
	uint64_t id = v.info.id;
	inst_view_free(&v);
	return id;
}

static inst_status_t create_err(const char *text, const char *route, inst_err_t *e)
{
	json_t *j = J(text);
	inst_view_t v;
	inst_status_t s = instances_create(&app, j, route, &v, e);
	json_decref(j);
	inst_view_free(&v);
	return s;
}

/* ---- error mapping --------------------------------------------------------------- */

static void every_status_maps_to_http_and_protocol(void **state)
{
	(void)state;
	static const struct {
		inst_status_t s;
		unsigned http;
		ptp_code_t ws;
	} want[] = {
	    {INST_OK, 200, 0},
	    {INST_INVALID, 422, PTP_CODE_LIMIT},
	    {INST_NOT_FOUND, 404, PTP_CODE_NOT_FOUND},
	    {INST_FORBIDDEN, 403, PTP_CODE_UNAUTHORIZED},
	    {INST_DRIVEN, 409, PTP_CODE_UNAUTHORIZED},
	    {INST_RATE, 429, PTP_CODE_RATE},
	    {INST_BUSY, 503, PTP_CODE_RATE},
	    {INST_FULL, 503, PTP_CODE_LIMIT},
	    {INST_CLOSED, 503, PTP_CODE_SHUTDOWN},
	    {INST_NO_MEMORY, 503, PTP_CODE_INTERNAL},
	    {INST_STORE, 503, PTP_CODE_INTERNAL},
	    {INST_CONFLICT, 409, PTP_CODE_LIMIT},
	};
	assert_int_equal(sizeof want / sizeof want[0], sizeof status_map / sizeof status_map[0]);
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
		assert_int_equal(inst_http_status(want[i].s), want[i].http);
		assert_int_equal(inst_ptp_code(want[i].s), want[i].ws);
	}
	assert_int_equal(inst_http_status((inst_status_t)99), 500);
	assert_int_equal(inst_ptp_code((inst_status_t)99), PTP_CODE_INTERNAL);
}

/* ---- pose admission -------------------------------------------------------------- */

static inst_status_t pose(uint64_t id, double px, double qw, int64_t seq, inst_rate_t *r,
                          inst_err_t *e)
{
	inst_pose_t p = {.id = id, .seq = seq, .p = {0, px, 0}, .q = {0, 0, 0, qw}};
	return instances_pose(&app, &p, r, e);
}

static void poses_are_checked_in_one_order(void **state)
{
	(void)state;
	inst_err_t e;
	uint64_t id = create("{}", NULL);
	/* input first, even for an instance that does not exist */
	assert_int_equal(pose(999, 1e4 + 1, 1, 0, NULL, &e), INST_INVALID);
	assert_string_equal(e.field, "p");
	assert_true(e.has_field);
	assert_int_equal(pose(999, NAN, 1, 0, NULL, &e), INST_INVALID);
	assert_string_equal(e.field, "p");
	assert_int_equal(pose(999, 0, 0.49, 0, NULL, &e), INST_INVALID); /* |q|^2 < 0.25 */
	assert_string_equal(e.field, "q");
	assert_int_equal(pose(999, 0, 2.01, 0, NULL, &e), INST_INVALID); /* |q|^2 > 4 */
	assert_string_equal(e.field, "q");
	assert_int_equal(pose(999, 0, 1, -1, NULL, &e), INST_INVALID);
	assert_string_equal(e.field, "seq");
	assert_int_equal(pose(999, 0, 1, 0x100000000LL, NULL, &e), INST_INVALID);
	assert_int_equal(metrics.poses_rejected_invalid, 6);
	/* then the instance */
	assert_int_equal(pose(999, 0, 1, 0, NULL, &e), INST_NOT_FOUND);
	assert_string_equal(e.message, "no instance 999");
	uint64_t bot = create("{\"driver\": {\"motion\": \"nod\"}}", NULL);
	assert_int_equal(pose(bot, 0, 1, 0, NULL, &e), INST_DRIVEN);
	assert_string_equal(e.field, "driver");
	assert_int_equal(metrics.poses_rejected_auth, 2);
	assert_int_equal(stub.nposted, 0);
	/* the edge values pass */
	assert_int_equal(pose(id, -1e4, 2, 0xffffffffLL, NULL, &e), INST_OK);
	assert_int_equal(stub.posted.seq, 0xffffffffu);
	assert_int_equal(metrics.poses_received, 1);
}

static void poses_are_normalised_once(void **state)
{
	(void)state;
	inst_err_t e;
	uint64_t id = create("{}", NULL);
	inst_pose_t p = {.id = id, .seq = 7, .p = {1, 2, 3}, .q = {0, 0, 1.2, 1.2}};
	assert_int_equal(instances_pose(&app, &p, NULL, &e), INST_OK);
	assert_int_equal(stub.posted.id, id);
	assert_int_equal(stub.posted.seq, 7);
	assert_float_equal(stub.posted.pose.p.y, 2.0f, 0);
	const pt_quat q = stub.posted.pose.q;
	assert_float_equal(q.x * q.x + q.y * q.y + q.z * q.z + q.w * q.w, 1.0f, 1e-6f);
	assert_float_equal(q.z, (float)(1.2 / sqrt(2.88)), 0);
}

/* v and w travel with the pose to the tick, which extrapolates the head from them; each is
 * checked like p, naming its field. */
static void pose_velocities_are_checked_and_carried(void **state)
{
	(void)state;
	inst_err_t e;
	uint64_t id = create("{}", NULL);
	stub.now_ns = 5000000000LL;
	inst_pose_t p = {.id = id, .q = {0, 0, 0, 1}, .moving = 1, .v = {0.5, 0, 0}, .w = {0, 3, 0}};
	assert_int_equal(instances_pose(&app, &p, NULL, &e), INST_OK);
	assert_int_equal(stub.posted.moving, 1);
	assert_float_equal(stub.posted.v.x, 0.5f, 0);
	assert_float_equal(stub.posted.w.y, 3.0f, 0);
	assert_true(stub.posted.arrival_ns == 5000000000LL);
	p.w[1] = 101;
	assert_int_equal(instances_pose(&app, &p, NULL, &e), INST_INVALID);
	assert_string_equal(e.field, "w");
	p.w[1] = 0, p.v[2] = NAN;
	assert_int_equal(instances_pose(&app, &p, NULL, &e), INST_INVALID);
	assert_string_equal(e.field, "v");
	assert_int_equal(stub.nposted, 1);
}

static void poses_beyond_the_rate_are_refused_until_tokens_refill(void **state)
{
	(void)state;
	inst_err_t e;
	uint64_t id = create("{}", NULL);
	inst_rate_t r;
	stub.now_ns = 1000000000LL;
	inst_rate_init(&app, &r);
	for (int i = 0; i < 10; i++) /* the burst */
		assert_int_equal(pose(id, 0, 1, 0, &r, &e), INST_OK);
	assert_int_equal(pose(id, 0, 1, 0, &r, &e), INST_RATE);
	assert_int_equal(metrics.poses_rejected_rate, 1);
	assert_non_null(strstr(e.message, "more than 40 poses per second"));
	stub.now_ns += 25000000LL; /* 25 ms at 40/s: one token */
	assert_int_equal(pose(id, 0, 1, 0, &r, &e), INST_OK);
	assert_int_equal(pose(id, 0, 1, 0, &r, &e), INST_RATE);
	/* a refused pose costs no token: the rate applies after the checks of the input */
	stub.now_ns += 25000000LL;
	assert_int_equal(pose(id, 1e5, 1, 0, &r, &e), INST_INVALID);
	assert_int_equal(pose(id, 0, 1, 0, &r, &e), INST_OK);
	assert_int_equal(metrics.poses_received, 12);
}

static void a_full_or_closed_inbox_refuses(void **state)
{
	(void)state;
	inst_err_t e;
	uint64_t id = create("{}", NULL);
	stub.post_result = -1;
	assert_int_equal(pose(id, 0, 1, 0, NULL, &e), INST_BUSY);
	stub.post_result = -2;
	assert_int_equal(pose(id, 0, 1, 0, NULL, &e), INST_CLOSED);
	assert_int_equal(metrics.poses_rejected_full, 2);
	assert_int_equal(metrics.poses_received, 0);
}

/* ---- writes ---------------------------------------------------------------------- */

static void create_stores_registers_and_commands(void **state)
{
	(void)state;
	char token[TOKEN_LEN + 1];
	uint64_t id = create("{\"name\": \"a\", \"room\": \"r\"}", token);
	assert_int_equal(id, 1);
	assert_int_equal(stub.inserts, 1);
	assert_int_equal(stub.npushed, 1);
	assert_int_equal(stub.pushed[0], CMD_CREATE);
	assert_int_equal(strlen(token), TOKEN_LEN);
	inst_err_t e;
	assert_int_equal(instances_authorize(&app, id, token, TOKEN_LEN, &e), INST_OK);
	assert_int_equal(instances_authorize(&app, id, "admin-secret", 12, &e), INST_OK);
	assert_int_equal(instances_authorize(&app, id, "nope", 4, &e), INST_FORBIDDEN);
	assert_string_equal(e.message, "wrong token for instance 1");
	assert_int_equal(instances_authorize(&app, 2, token, TOKEN_LEN, &e), INST_NOT_FOUND);
	inst_view_t v;
	assert_int_equal(instances_get(&app, id, &v, &e), INST_OK);
	assert_string_equal(v.info.name, "a");
	assert_string_equal(v.info.room, "r");
	assert_non_null(strstr(v.doc, "\"room\""));
	inst_view_free(&v);
	assert_int_equal(instances_get(&app, 9, &v, &e), INST_NOT_FOUND);
	assert_string_equal(e.field, "id");
}

static void create_refusals_leave_nothing_behind(void **state)
{
	(void)state;
	inst_err_t e;
	assert_int_equal(create_err("{\"strands\": [{\"points\": 1}]}", NULL, &e), INST_INVALID);
	assert_string_equal(e.field, "strands[0].points");
	assert_int_equal(create_err("{\"room\": \"a\"}", "b", &e), INST_INVALID);
	assert_string_equal(e.field, "room");
	assert_int_equal(
	    create_err("{\"strands\": [{\"points\": 64}, {\"points\": 64}]}", NULL, &e),
	    INST_INVALID);
	assert_string_equal(e.field, "strands");
	stub.fail_insert = 1;
	assert_int_equal(create_err("{}", NULL, &e), INST_STORE);
	assert_false(e.has_field);
	stub.fail_insert = 0;
	__atomic_store_n(&app.draining, 1, __ATOMIC_RELEASE);
	assert_int_equal(create_err("{}", NULL, &e), INST_CLOSED);
	__atomic_store_n(&app.draining, 0, __ATOMIC_RELEASE);
	assert_int_equal(stub.npushed, 0);
	assert_int_equal(instances_count(&app), 0);
	/* the sim is out of memory: rolled back out of the store and the registry */
	stub.result = CMD_NO_MEMORY;
	assert_int_equal(create_err("{}", NULL, &e), INST_NO_MEMORY);
	assert_int_equal(stub.deletes, 1);
	assert_int_equal(stub.last_deleted, stub.next_id);
	assert_int_equal(instances_count(&app), 0);
	/* the sim stopped after the store write: kept (a restart loads it) */
	stub.result = CMD_CLOSED;
	assert_int_equal(create_err("{}", NULL, &e), INST_CLOSED);
	assert_int_equal(stub.deletes, 1);
	assert_int_equal(instances_count(&app), 1);
	/* --max-instances */
	stub.result = CMD_OK;
	create("{}", NULL);
	create("{}", NULL);
	assert_int_equal(create_err("{}", NULL, &e), INST_FULL);
	assert_non_null(strstr(e.message, "at most 3 instances"));
}

static void patch_writes_only_changes_and_rolls_back(void **state)
{
	(void)state;
	inst_err_t e;
	inst_view_t v;
	uint64_t id = create("{\"name\": \"a\"}", NULL);
	json_t *same = J("{\"name\": \"a\"}"), *rename = J("{\"name\": \"b\"}"),
	       *bad = J("{\"substeps\": 99}");
	assert_int_equal(instances_patch(&app, id, same, NULL, &v, &e), INST_OK);
	inst_view_free(&v);
	assert_int_equal(stub.updates, 0);
	assert_int_equal(stub.npushed, 1); /* the create only */
	assert_int_equal(instances_patch(&app, id, bad, NULL, &v, &e), INST_INVALID);
	assert_string_equal(e.field, "substeps");
	assert_int_equal(instances_patch(&app, 77, rename, NULL, &v, &e), INST_NOT_FOUND);
	/* the sim refuses: store and registry go back to the old document */
	stub.result = CMD_NO_MEMORY;
	assert_int_equal(instances_patch(&app, id, rename, NULL, &v, &e), INST_NO_MEMORY);
	assert_int_equal(stub.updates, 2);
	assert_non_null(strstr(stub.last_update, "\"name\":\"a\""));
	assert_int_equal(instances_get(&app, id, &v, &e), INST_OK);
	assert_string_equal(v.info.name, "a");
	inst_view_free(&v);
	/* the store refuses: put back, no command */
	stub.result = CMD_OK;
	stub.fail_update = 1;
	int pushed = stub.npushed;
	assert_int_equal(instances_patch(&app, id, rename, NULL, &v, &e), INST_STORE);
	assert_int_equal(stub.npushed, pushed);
	stub.fail_update = 0;
	assert_int_equal(instances_patch(&app, id, rename, NULL, &v, &e), INST_OK);
	assert_string_equal(v.info.name, "b");
	assert_int_equal(stub.pushed[stub.npushed - 1], CMD_UPDATE);
	inst_view_free(&v);
	json_decref(same);
	json_decref(rename);
	json_decref(bad);
}

static void delete_reset_and_frame(void **state)
{
	(void)state;
	inst_err_t e;
	uint64_t id = create("{}", NULL);
	assert_int_equal(instances_delete(&app, 42, &e), INST_NOT_FOUND);
	assert_int_equal(stub.deletes, 0);
	stub.fail_delete = 1;
	assert_int_equal(instances_delete(&app, id, &e), INST_STORE);
	assert_int_equal(instances_count(&app), 1);
	stub.fail_delete = 0;
	stub.result = CMD_NOT_FOUND; /* gone from the sim already: still a success */
	assert_int_equal(instances_delete(&app, id, &e), INST_OK);
	assert_int_equal(instances_count(&app), 0);
	assert_int_equal(stub.pushed[stub.npushed - 1], CMD_DELETE);
	assert_int_equal(instances_reset(&app, id, &e), INST_NOT_FOUND);
	cmd_frame_t f;
	assert_int_equal(instances_frame(&app, id, &f, &e), INST_NOT_FOUND);
	assert_null(f.xyz);
	inst_frame_release(&f);
	stub.result = CMD_CLOSED;
	assert_int_equal(instances_reset(&app, id, &e), INST_CLOSED);
	assert_string_equal(e.message, "the server is shutting down");
}

/* A frame read answers from the newest published frame set when it holds a snapshot of
 * the instance, without a command (so without waiting for a tick); the first read, which
 * finds none, goes through the queue and asks the sim to keep snapshots from then on. */
static void frame_read_from_the_newest_published_snapshot(void **state)
{
	(void)state;
	cfg.tick_hz = 60;
	frame_ring_t *ring = frame_ring_create(8);
	assert_non_null(ring);
	app.ring = ring;
	/* tick 7: instance 5 in sim slot 2, no snapshot yet */
	for (int pass = 0; pass < 2; pass++) {
		frame_set_t *fs = frame_ring_begin(ring, 3, 0);
		assert_non_null(fs);
		fs->tick = 7 + (uint64_t)pass;
		fs->entries[2].id = 5;
		fs->entries[2].meta = meta_new(1);
		fs->by_id[0] = 2;
		fs->nlive = 1;
		if (pass == 1) {
			frame_snap_t *sn = frame_snap_new(2);
			assert_non_null(sn);
			sn->id = 5, sn->tick = 8, sn->last_seq = 33, sn->n = 2, sn->strand_count = 1;
			sn->points[0] = 2;
			sn->head = (pt_pose){pt_v3(1, 2, 3), pt_quat_identity()};
			sn->xyz[0] = pt_v3(1, 2, 3), sn->xyz[1] = pt_v3(1, 1.9f, 3);
			fs->entries[2].snap = sn;
		}
		assert_int_equal(frame_ring_publish(ring, fs, NULL, 0), 0);
		cmd_frame_t f;
		inst_err_t e;
		int pushed = stub.npushed;
		stub.result = CMD_OK;
		assert_int_equal(instances_frame(&app, 5, &f, &e), INST_OK);
		if (pass == 0) {
			/* no snapshot: through the queue, and the sim is asked for them from tick 8
			 * for a second of ticks */
			assert_int_equal(stub.npushed, pushed + 1);
			assert_int_equal(stub.pushed[stub.npushed - 1], CMD_FRAME);
			assert_null(f.snap);
			assert_false(frame_ring_snap_wanted(ring, 2, 7 + 60 + 1));
			assert_true(frame_ring_snap_wanted(ring, 2, 7 + 60));
			assert_false(frame_ring_snap_wanted(ring, 1, 8));
			assert_null(inst_frame_keep_text(&f, strdup("x"))); /* nothing to keep it in */
		} else {
			assert_int_equal(stub.npushed, pushed); /* no command: no tick waited for */
			assert_int_equal(f.tick, 8);
			assert_true(fabs(f.t - 8.0 / 60) < 1e-12);
			assert_int_equal(f.last_seq, 33);
			assert_int_equal(f.n, 2);
			assert_int_equal(f.strand_count, 1);
			assert_int_equal(f.points[0], 2);
			assert_true(f.xyz[1].y == 1.9f && f.head.p.z == 3.0f);
			/* the first rendering of the tick is kept; a second offer is dropped */
			assert_null(inst_frame_text(&f));
			const char *kept = inst_frame_keep_text(&f, strdup("{\"tick\":8}"));
			assert_string_equal(kept, "{\"tick\":8}");
			assert_ptr_equal(inst_frame_keep_text(&f, strdup("other")), kept);
			cmd_frame_t g;
			assert_int_equal(instances_frame(&app, 5, &g, &e), INST_OK);
			assert_ptr_equal(inst_frame_text(&g), kept);
			inst_frame_release(&g);
			/* an id the set does not hold: through the queue */
			cmd_frame_t h;
			stub.result = CMD_NOT_FOUND;
			assert_int_equal(instances_frame(&app, 6, &h, &e), INST_NOT_FOUND);
			assert_int_equal(stub.npushed, pushed + 1);
			inst_frame_release(&h);
		}
		inst_frame_release(&f);
	}
	app.ring = NULL;
	frame_ring_destroy(ring); /* drops the set's snapshot and metas: ASan checks */
}

static void load_skips_rows_that_no_longer_parse(void **state)
{
	(void)state;
	int loaded, skipped;
	preloaded = 0;
	assert_int_equal(instances_load(&app, &loaded, &skipped), 0);
	assert_int_equal(loaded, 1);
	assert_int_equal(skipped, 1);
	assert_int_equal(preloaded, 1);
	reg_info_t *all;
	int n;
	inst_err_t e;
	assert_int_equal(instances_list(&app, NULL, &all, &n, &e), INST_OK);
	assert_int_equal(n, 1);
	assert_int_equal(all[0].id, 5);
	assert_string_equal(all[0].name, "kept");
	free(all);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(every_status_maps_to_http_and_protocol),
	    cmocka_unit_test_setup_teardown(poses_are_checked_in_one_order, setup, teardown),
	    cmocka_unit_test_setup_teardown(poses_are_normalised_once, setup, teardown),
	    cmocka_unit_test_setup_teardown(pose_velocities_are_checked_and_carried, setup, teardown),
	    cmocka_unit_test_setup_teardown(poses_beyond_the_rate_are_refused_until_tokens_refill,
	                                    setup, teardown),
	    cmocka_unit_test_setup_teardown(a_full_or_closed_inbox_refuses, setup, teardown),
	    cmocka_unit_test_setup_teardown(create_stores_registers_and_commands, setup, teardown),
	    cmocka_unit_test_setup_teardown(create_refusals_leave_nothing_behind, setup, teardown),
	    cmocka_unit_test_setup_teardown(patch_writes_only_changes_and_rolls_back, setup,
	                                    teardown),
	    cmocka_unit_test_setup_teardown(delete_reset_and_frame, setup, teardown),
	    cmocka_unit_test_setup_teardown(frame_read_from_the_newest_published_snapshot, setup,
	                                    teardown),
	    cmocka_unit_test_setup_teardown(load_skips_rows_that_no_longer_parse, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
