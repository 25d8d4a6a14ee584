/* The sim's guard against non-finite state: the definition ranges are chosen so that no
 * solver goes NaN or infinite (tests/core/test_ranges.c), but should an instance do so
 * anyway it is found, logged, counted (ponytail_instances_nonfinite_resets_total) and
 * put back at rest — never encoded, never served as JSON garbage or a 500.
 *
 * Found three ways: gather_one (sim_frame.c) flags a watched instance whose points it was
 * about to encode; read_frame checks what REST asked for; and every tick this sweep reads
 * a few more instances round robin, so that each one is checked at least once a second
 * whether or not anybody watches it. Sim thread only (gather_one's flag is set by the
 * worker that owns the slot and read here after pool_run). */
#include "log.h"
#include "metrics.h"
#include "sim_internal.h"

int sim_points_finite(const pt_vec3 *p, int n)
{
	/* x - x is 0 for a finite x and NaN for an infinite or NaN one. */
	float acc = 0.0f;
	for (int i = 0; i < n; i++)
		acc += (p[i].x - p[i].x) + (p[i].y - p[i].y) + (p[i].z - p[i].z);
	return acc == 0.0f;
}

void sim_guard_reset(sim_t *s, int slot, const char *found_by)
{
	sim_inst_t *in = &s->inst[slot];
	pt_world_reset_instance(s->world, in->pid);
	simrec_id(in, PT_REC_RESET);
	sim_enc_force_key(in);
	sim_push_event(s, PTP_EVENT_RESET, meta_ref(in->meta), NULL);
	in->nonfinite = 0;
	metrics_add(&metrics.instances_nonfinite_resets, 1);
	/* At most one line a second, with the count, whatever a broken solver does. */
	s->guard_unlogged++;
	int64_t now = sim_mono_ns();
	if (now - s->guard_logged_ns >= 1000000000LL) {
		LOG(LOG_ERROR,
		    "instance %llu went non-finite at tick %llu (found by %s): reset to rest "
		    "(%llu such resets since the last report)",
		    (unsigned long long)in->id, (unsigned long long)s->tick, found_by,
		    (unsigned long long)s->guard_unlogged);
		s->guard_unlogged = 0;
		s->guard_logged_ns = now;
	}
}

int sim_guard_check(sim_t *s, int slot, pt_vec3 *scratch, const char *found_by)
{
	sim_inst_t *in = &s->inst[slot];
	int n = pt_world_read_points(s->world, in->pid, scratch, SERVER_MAX_POINTS);
	if (n < 0 || sim_points_finite(scratch, n))
		return 0;
	sim_guard_reset(s, slot, found_by);
	return 1;
}

void sim_guard_sweep(sim_t *s)
{
	for (int slot = 0; slot < s->nslots; slot++)
		if (s->inst[slot].id && s->inst[slot].nonfinite)
			sim_guard_reset(s, slot, "the frame encoder");
	if (s->nslots == 0)
		return;
	int n = s->nslots / s->cfg.tick_hz + 1;
	for (int i = 0; i < n; i++) {
		int slot = s->guard_next++ % s->nslots;
		if (s->inst[slot].id)
			sim_guard_check(s, slot, s->scratch[0].pts, "the sweep");
	}
	if (s->guard_next >= s->nslots)
		s->guard_next = 0;
}
