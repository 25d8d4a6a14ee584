/* Frame writers and summary metrics for `ponytail sim` (see sim_output.h). */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sdf.h"
#include "sim_output.h"

/* The shortest decimal that reads back as the same float: 1.55, not 1.54999995. */
void sim_put_float(FILE *out, float f, const char *non_finite)
{
	char buf[32];
	if (!isfinite(f)) {
		fputs(non_finite, out);
		return;
	}
	for (int prec = 6; prec <= 9; prec++) {
		snprintf(buf, sizeof buf, "%.*g", prec, (double)f);
		if (strtof(buf, NULL) == f)
			break;
	}
	fputs(buf, out);
}

void sim_put_vec(FILE *out, const float *v, int n)
{
	fputc('[', out);
	for (int i = 0; i < n; i++) {
		if (i)
			fputc(',', out);
		sim_put_float(out, v[i], "null");
	}
	fputc(']', out);
}

void sim_write_header(FILE *out, sim_format fmt)
{
	if (fmt == SIM_FORMAT_CSV)
		fputs("tick,t,strand,point,x,y,z\n", out);
}

void sim_write_frame(FILE *out, sim_format fmt, int tick, double t, uint64_t state_hash,
                     const pt_pose *head, const sim_layout *lay, const pt_vec3 *pts)
{
	if (fmt == SIM_FORMAT_CSV) {
		for (int s = 0; s < lay->strands; s++)
			for (int i = 0; i < lay->points[s]; i++) {
				const pt_vec3 *p = &pts[lay->first[s] + i];
				fprintf(out, "%d,%.9g,%d,%d,", tick, t, s, i);
				sim_put_float(out, p->x, "nan");
				fputc(',', out);
				sim_put_float(out, p->y, "nan");
				fputc(',', out);
				sim_put_float(out, p->z, "nan");
				fputc('\n', out);
			}
		return;
	}
	float hp[3] = {head->p.x, head->p.y, head->p.z};
	float hq[4] = {head->q.x, head->q.y, head->q.z, head->q.w};
	fprintf(out, "{\"tick\":%d,\"t\":%.9g,\"state_hash\":\"%016" PRIx64 "\",\"head\":{\"p\":", tick,
	        t, state_hash);
	sim_put_vec(out, hp, 3);
	fputs(",\"q\":", out);
	sim_put_vec(out, hq, 4);
	fputs("},\"strands\":[", out);
	for (int s = 0; s < lay->strands; s++) {
		fputs(s ? ",[" : "[", out);
		for (int i = 0; i < lay->points[s]; i++) {
			const pt_vec3 *p = &pts[lay->first[s] + i];
			float v[3] = {p->x, p->y, p->z};
			if (i)
				fputc(',', out);
			sim_put_vec(out, v, 3);
		}
		fputc(']', out);
	}
	fputs("]}\n", out);
}

static int finite3(pt_vec3 v)
{
	return isfinite(v.x) && isfinite(v.y) && isfinite(v.z);
}

static double dist(pt_vec3 a, pt_vec3 b)
{
	double dx = (double)a.x - b.x, dy = (double)a.y - b.y, dz = (double)a.z - b.z;
	return sqrt(dx * dx + dy * dy + dz * dz);
}

static int pose_eq(const pt_pose *a, const pt_pose *b)
{
	return a->p.x == b->p.x && a->p.y == b->p.y && a->p.z == b->p.z && a->q.x == b->q.x &&
	       a->q.y == b->q.y && a->q.z == b->q.z && a->q.w == b->q.w;
}

void sim_metrics_init(sim_metrics *m, const pt_instance_def *def, const sim_layout *lay,
                      double tick_hz, const pt_pose *head0, const pt_vec3 *initial)
{
	double local[PT_MAX_STRANDS][3];
	memset(m, 0, sizeof *m);
	m->def = def;
	m->lay = *lay;
	m->tick_hz = tick_hz;
	m->head_stop_tick = -1;
	m->last_fast_tick = -1;
	m->prev_head = *head0;
	for (int s = 0; s < lay->strands; s++) {
		m->tips[s] = initial[lay->first[s] + lay->points[s] - 1];
		sim_head_local(head0, m->tips[s], local[s]);
	}
	sim_tips_init(&m->tip, lay->strands, tick_hz, (const double(*)[3])local);
}

/* How far point i of strand s is inside the colliders it sees, counting its own radius
 * (verlet: the strand's radius; springbone: the joint's hit_radius, as the solvers push
 * points out to that distance). The root is pinned and exempt. */
static double penetration(const sim_metrics *m, int s, int i, const pt_pose *head, pt_vec3 p)
{
	const pt_instance_def *d = m->def;
	const pt_strand_def *st = &d->strands[s];
	double r = d->solver == PT_SOLVER_SPRINGBONE ? st->joints[i - 1].hit_radius : st->radius;
	double worst = 0;
	pt_collider_mask sees = pt_strand_collider_mask(st, d->collider_count);
	for (int c = 0; c < d->collider_count; c++) {
		if (!pt_mask_test(&sees, c))
			continue;
		const pt_pose *frame =
		    d->colliders[c].attach == PT_ATTACH_BONE ? &m->bone_frame[c] : head;
		double pen = r - sim_sdf(&d->colliders[c], frame, p);
		if (pen > worst)
			worst = pen;
	}
	return worst;
}

/* The rest length of segment j (point j -> j + 1) of strand s, as the solvers keep it:
 * from the rest shape when the strand has one ("rest": each segment its own length, as
 * imported VRM chains have), else segment_length. segment_length alone is wrong for a
 * rest-shape strand: the schema sets it to the first segment's length. */
static double rest_length(const pt_instance_def *def, int s, int j)
{
	float len;
	pt_vec3 dir;
	pt_strand_rest_segment(&def->strands[s], j, &len, &dir);
	return len;
}

void sim_metrics_add(sim_metrics *m, int tick, const pt_pose *head, const pt_vec3 *pts)
{
	const sim_layout *lay = &m->lay;
	double local[PT_MAX_STRANDS][3];
	int fast = 0, moving = !pose_eq(head, &m->prev_head);
	m->ticks = tick + 1;
	if (moving)
		m->head_stop_tick = tick;
	m->prev_head = *head;
	for (int s = 0; s < lay->strands; s++) {
		const pt_vec3 *sp = &pts[lay->first[s]];
		for (int i = 0; i < lay->points[s]; i++) {
			if (!finite3(sp[i])) {
				m->nan_count++;
				continue;
			}
			if (i == 0)
				continue;
			if (finite3(sp[i - 1])) {
				double L = rest_length(m->def, s, i - 1);
				double err = fabs(dist(sp[i], sp[i - 1]) - L) / L;
				m->max_segment_error = fmax(m->max_segment_error, err);
			}
			m->max_penetration =
			    fmax(m->max_penetration, penetration(m, s, i, head, sp[i]));
		}
		pt_vec3 tip = sp[lay->points[s] - 1];
		if (finite3(tip) && finite3(m->tips[s])) {
			double v = dist(tip, m->tips[s]) * m->tick_hz;
			m->max_tip_speed = fmax(m->max_tip_speed, v);
			fast |= v >= 0.01;
		} else {
			fast = 1;
		}
		m->tips[s] = tip;
		sim_head_local(head, tip, local[s]);
	}
	if (fast)
		m->last_fast_tick = tick;
	sim_tips_add(&m->tip, moving, (const double(*)[3])local);
}

void sim_metrics_print(const sim_metrics *m, FILE *out, int substeps)
{
	/* The head stops at its last moving tick (time 0 if it never moved); the tips have
	 * settled from the frame after the last one with a tip at >= 1 cm/s. Null when the
	 * head still moves in the last tick or a tip does. */
	double stop = m->head_stop_tick < 0 ? 0.0 : m->head_stop_tick / m->tick_hz;
	double settled = (m->last_fast_tick + 1) / m->tick_hz;
	int never = m->last_fast_tick >= m->ticks - 1 ||
	            (m->head_stop_tick >= 0 && m->head_stop_tick == m->ticks - 1);
	fprintf(out,
	        "{\"ticks\":%d,\"tick_hz\":%.9g,\"substeps\":%d,\"strands\":%d,\"points\":%d,"
	        "\"max_penetration_m\":%.6g,\"max_segment_error_ratio\":%.6g,"
	        "\"max_tip_speed_mps\":%.6g,\"head_stop_s\":%.9g,\"settle_s\":",
	        m->ticks, m->tick_hz, substeps, m->lay.strands, m->lay.total, m->max_penetration,
	        m->max_segment_error, m->max_tip_speed, stop);
	if (never)
		fputs("null", out);
	else
		fprintf(out, "%.9g", settled > stop ? settled - stop : 0.0);
	double sigma = sim_tips_sigma(&m->tip, sim_tips_widest(&m->tip)), zeta = 0;
	int turns = never ? 0 : sim_tips_fit(&m->tip, &zeta);
	fprintf(out, ",\"nan_count\":%ld,\"max_tip_speed_head_mps\":%.6g,\"tip_sigma_m\":",
	        m->nan_count, m->tip.max_speed);
	if (sigma < 0)
		fputs("null", out);
	else
		fprintf(out, "%.6g", sigma);
	fputs(",\"damping_ratio\":", out);
	if (turns)
		fprintf(out, "%.6g", zeta);
	else
		fputs("null", out);
	fprintf(out, ",\"decay_turning_points\":%d}\n", turns);
}
