/* Touch and grabs (ponytail/touch.h, issue 40): a hand swept through a ponytail never
 * holds a point deeper than 1 mm and leaves every length as the solver keeps it (verlet at
 * 1 to 16 substeps and 1 or 3 iterations, spring bones at substep and frame rate, 30 to 120
 * Hz ticks); a grabbed point follows its target, or lies on the line toward it at the
 * chain's reach; a chain held at both ends settles to the discrete catenary; touch and
 * grabs last one step; the kernels agree bit for bit; bad input names its field.
 *
 * Every expectation is computed here, independently of core: distances from a point to a
 * capsule, lengths, the catenary (its own solver below). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <math.h>
#include <string.h>

#include "ponytail/touch.h"
#include "testdef.h"

#define N 12             /* points of the test strand */
#define SEG 0.03         /* its segment length, m */
#define HAND_R 0.04f     /* the hand capsule's radius, m */
#define ROOT_Y 1.5f

static pt_pose head_at(float x, float y, float z)
{
	pt_pose p = {pt_v3(x, y, z), pt_quat_identity()};
	return p;
}

static pt_vec3 v3lerp_test(pt_vec3 a, pt_vec3 b, float t)
{
	return pt_v3(a.x + (b.x - a.x) * t, a.y + (b.y - a.y) * t, a.z + (b.z - a.z) * t);
}

/* One strand of N points hanging along -Y from the head origin, nothing else. */
static void hanging(pt_instance_def *d, pt_solver solver)
{
	tdef_init(d);
	d->solver = solver;
	d->prewarm_s = 0;
	d->strands[0].points = N;
	d->strands[0].segment_length = (float)SEG;
	d->strands[0].anchor = pt_v3(0, 0, 0);
	d->strands[0].direction = pt_v3(0, -1, 0);
}

/* ---- the test's own geometry (double) ------------------------------------------------- */

typedef struct dv {
	double x, y, z;
} dv;

static dv D(pt_vec3 v)
{
	dv r = {v.x, v.y, v.z};
	return r;
}
static dv dsub(dv a, dv b)
{
	dv r = {a.x - b.x, a.y - b.y, a.z - b.z};
	return r;
}
static double ddot(dv a, dv b)
{
	return a.x * b.x + a.y * b.y + a.z * b.z;
}
static double dlen(dv a)
{
	return sqrt(ddot(a, a));
}

/* Distance from p to the segment [a, b]. */
static double seg_distance(dv p, dv a, dv b)
{
	dv ab = dsub(b, a), ap = dsub(p, a);
	double l2 = ddot(ab, ab), t = l2 > 0 ? ddot(ap, ab) / l2 : 0;
	t = t < 0 ? 0 : (t > 1 ? 1 : t);
	dv c = {a.x + ab.x * t, a.y + ab.y * t, a.z + ab.z * t};
	return dlen(dsub(p, c));
}

/* Largest relative error of the N - 1 segment lengths of p (rest SEG). */
static double length_error(const pt_vec3 *p)
{
	double e = 0;
	for (int j = 1; j < N; j++) {
		double l = dlen(dsub(D(p[j]), D(p[j - 1])));
		e = fmax(e, fabs(l - SEG) / SEG);
	}
	return e;
}

/* ---- a hand swept through the hair ------------------------------------------------------ */

/* The hand: a capsule across the strand (along z, 10 cm) at y = ROOT_Y - 0.2, moving
 * along +x at v m/s from x = -0.3; its axis at time t. */
static void hand_at(double v, double t, pt_vec3 *a, pt_vec3 *b)
{
	float x = (float)(-0.3 + v * t);
	*a = pt_v3(x, ROOT_Y - 0.2f, -0.05f);
	*b = pt_v3(x, ROOT_Y - 0.2f, 0.05f);
}

typedef struct sweep_result {
	double depth;   /* deepest a point was inside the hand after a tick, m */
	double lengths; /* largest relative length error after a tick */
	double moved;   /* largest |x| a point reached, m */
} sweep_result;

/* Sweeps the hand through the instance's strand at v m/s (ticks of 1/hz s) until it has
 * passed, measuring after every tick against the hand where the tick left it. */
static sweep_result sweep(pt_world *w, pt_id id, double v, float hz, int substeps, float radius)
{
	sweep_result r = {0, 0, 0};
	double dt = 1.0 / hz;
	int ticks = (int)(0.6 / v * hz) + 2;
	for (int k = 0; k < ticks; k++) {
		pt_touch t;
		memset(&t, 0, sizeof t);
		t.shape = PT_SHAPE_CAPSULE;
		t.radius = HAND_R;
		hand_at(v, k * dt, &t.a0, &t.b0);
		hand_at(v, (k + 1) * dt, &t.a1, &t.b1);
		assert_int_equal(pt_world_set_touch(w, id, &t, 1), 1);
		pt_world_step(w, (float)dt, substeps);
		pt_vec3 p[N];
		assert_int_equal(pt_world_read_points(w, id, p, N), N);
		for (int j = 1; j < N; j++) {
			double d = seg_distance(D(p[j]), D(t.a1), D(t.b1));
			r.depth = fmax(r.depth, (double)HAND_R + radius - d);
			r.moved = fmax(r.moved, fabs(p[j].x));
		}
		r.lengths = fmax(r.lengths, length_error(p));
	}
	return r;
}

/* Verlet, particle radius 5 mm: at every substep count, iteration count and speed, no
 * point ends a tick more than 1 mm inside the hand (plus 1 um for float rounding at 1.5
 * m), lengths stay exact (the solver's own 1e-5: follow-the-leader in float), and the
 * hair was carried: a point 20 cm down a strand the hand crosses is pushed at least
 * 5 cm aside before the hand passes beneath it. */
static void test_verlet_sweep(void **state)
{
	(void)state;
	const double speeds[3] = {0.5, 1.0, 2.0};
	sweep_result worst = {0, 0, 1};
	for (int sub = 1; sub <= 16; sub *= 2)
		for (int it = 1; it <= 3; it += 2)
			for (int v = 0; v < 3; v++) {
				pt_world *w = pt_world_create(NULL);
				pt_instance_def d;
				hanging(&d, PT_SOLVER_VERLET);
				d.verlet.iterations = it;
				pt_id id = pt_world_create_instance(w, &d, head_at(0, ROOT_Y, 0));
				sweep_result r = sweep(w, id, speeds[v], 60.0f, sub, 0.005f);
				if (r.depth > 0.001001 || r.lengths > 1e-5 || r.moved < 0.05)
					print_error("verlet sub %d it %d v %.1f: depth %.6f lengths %.2e moved %.3f\n",
					            sub, it, speeds[v], r.depth, r.lengths, r.moved);
				assert_true(r.depth <= 0.001001);
				assert_true(r.lengths <= 1e-5);
				assert_true(r.moved >= 0.05);
				worst.depth = fmax(worst.depth, r.depth);
				worst.lengths = fmax(worst.lengths, r.lengths);
				worst.moved = fmin(worst.moved, r.moved);
				pt_world_destroy(w);
				pt_instance_def_fini(&d);
			}
	print_message("worst depth %.3f mm, length error %.2e, least displacement %.3f m\n",
	              worst.depth * 1e3, worst.lengths, worst.moved);
}

/* Spring bone (vrm form, hit_radius 2 cm), at substep rate (4 substeps) and at the
 * authored frame rate, ticks of 30, 60 and 120 Hz (two, one and half a frame a tick): the
 * same bounds, measured with the hit radius. */
static void test_springbone_sweep(void **state)
{
	(void)state;
	const float rates[3] = {30.0f, 60.0f, 120.0f};
	const double speeds[3] = {0.5, 1.0, 2.0};
	sweep_result worst = {0, 0, 1};
	for (int rate = 0; rate < 2; rate++)
		for (int h = 0; h < 3; h++)
			for (int v = 0; v < 3; v++) {
				pt_world *w = pt_world_create(NULL);
				pt_instance_def d;
				hanging(&d, PT_SOLVER_SPRINGBONE);
				d.springbone.rate = rate ? PT_SPRINGBONE_RATE_SUBSTEP : PT_SPRINGBONE_RATE_FRAME;
				pt_id id = pt_world_create_instance(w, &d, head_at(0, ROOT_Y, 0));
				sweep_result r = sweep(w, id, speeds[v], rates[h], 4, 0.02f);
				if (r.depth > 0.001001 || r.lengths > 1e-5 || r.moved < 0.05)
					print_error("springbone rate %d %g Hz v %.1f: depth %.6f lengths %.2e moved %.3f\n",
					            rate, rates[h], speeds[v], r.depth, r.lengths, r.moved);
				assert_true(r.depth <= 0.001001);
				assert_true(r.lengths <= 1e-5);
				assert_true(r.moved >= 0.05);
				worst.depth = fmax(worst.depth, r.depth);
				worst.lengths = fmax(worst.lengths, r.lengths);
				worst.moved = fmin(worst.moved, r.moved);
				pt_world_destroy(w);
				pt_instance_def_fini(&d);
			}
	print_message("worst depth %.3f mm, length error %.2e, least displacement %.3f m\n",
	              worst.depth * 1e3, worst.lengths, worst.moved);
}

/* ---- grabs ------------------------------------------------------------------------------- */

static pt_grab grab(int point, pt_vec3 t0, pt_vec3 t1)
{
	pt_grab g;
	memset(&g, 0, sizeof g);
	g.strand = 0;
	g.point = point;
	g.t0 = t0, g.t1 = t1;
	return g;
}

/* The tip's target on a circle of radius 0.1 m about (0, ROOT_Y - 0.2, 0) in the x-y
 * plane, once round a second: always within the chain's reach (0.33 m from the root). */
static pt_vec3 circle(double t)
{
	double a = 2 * 3.14159265358979 * t;
	return pt_v3((float)(0.1 * sin(a)), (float)(ROOT_Y - 0.2 - 0.1 * cos(a)), 0.0f);
}

/* Within reach the grabbed tip ends every tick within 1 mm of the target (aimed: 1e-5
 * m), lengths exact, in both solvers and at 1 and 4 substeps. Beyond reach (a target 0.5
 * m to the side and rising) the tip lies on the line from the root toward it, at the
 * chain's reach 0.33 m, within 1 % of it. */
static void test_grab_tip(void **state)
{
	(void)state;
	for (int solver = 0; solver < 2; solver++)
		for (int sub = 1; sub <= 4; sub *= 4) {
			pt_world *w = pt_world_create(NULL);
			pt_instance_def d;
			hanging(&d, solver ? PT_SOLVER_SPRINGBONE : PT_SOLVER_VERLET);
			d.springbone.rate = PT_SPRINGBONE_RATE_SUBSTEP;
			pt_id id = pt_world_create_instance(w, &d, head_at(0, ROOT_Y, 0));
			double dt = 1.0 / 60.0;
			pt_vec3 p[N];
			/* from where the tip hangs to the circle's bottom, then round */
			pt_vec3 start = pt_v3(0, ROOT_Y - 0.33f, 0);
			for (int k = 0; k < 120; k++) {
				double t0 = (k - 30) * dt, t1 = (k - 29) * dt;
				pt_vec3 a = k < 30 ? v3lerp_test(start, circle(0), k / 30.0f) : circle(t0);
				pt_vec3 b = k < 30 ? v3lerp_test(start, circle(0), (k + 1) / 30.0f) : circle(t1);
				pt_grab g = grab(N - 1, a, b);
				assert_int_equal(pt_world_set_grabs(w, id, &g, 1), 1);
				pt_world_step(w, (float)dt, sub);
				pt_world_read_points(w, id, p, N);
				if (dlen(dsub(D(p[N - 1]), D(b))) > 0.001)
					print_error("solver %d sub %d tick %d: %.6f from target\n", solver, sub, k,
					            dlen(dsub(D(p[N - 1]), D(b))));
				assert_true(dlen(dsub(D(p[N - 1]), D(b))) <= 0.001);
				assert_true(length_error(p) <= 1e-5);
			}
			for (int k = 0; k < 60; k++) { /* beyond reach */
				pt_vec3 a = pt_v3(0.5f, ROOT_Y - 0.2f + 0.005f * k, 0.1f);
				pt_vec3 b = pt_v3(0.5f, ROOT_Y - 0.2f + 0.005f * (k + 1), 0.1f);
				pt_grab g = grab(N - 1, a, b);
				assert_int_equal(pt_world_set_grabs(w, id, &g, 1), 1);
				pt_world_step(w, (float)dt, sub);
				pt_world_read_points(w, id, p, N);
				dv root = D(p[0]), u = dsub(D(b), root), tip = dsub(D(p[N - 1]), root);
				double ul = dlen(u), reach = SEG * (N - 1);
				double along = ddot(tip, u) / ul;
				dv off = {tip.x - u.x * along / ul, tip.y - u.y * along / ul,
				          tip.z - u.z * along / ul};
				assert_true(fabs(along - reach) <= 0.01 * reach);
				assert_true(dlen(off) <= 0.01 * reach);
				assert_true(length_error(p) <= 1e-5);
			}
			pt_world_destroy(w);
			pt_instance_def_fini(&d);
		}
}

/* A grabbed middle point (point 5, 15 cm down) held 10 cm to the side and up (14 cm from
 * the root: within its reach): it stays within 1 mm of its target every tick, lengths
 * exact, and once still the six points past it hang from it: in verlet straight down (a
 * free chain end under gravity: each within 1 mm of the vertical through the grabbed
 * point after 5 s; the damping leaves nothing of the swing); in the spring bone below
 * it (see there). */
static void test_grab_middle(void **state)
{
	(void)state;
	for (int solver = 0; solver < 2; solver++) {
		pt_world *w = pt_world_create(NULL);
		pt_instance_def d;
		hanging(&d, solver ? PT_SOLVER_SPRINGBONE : PT_SOLVER_VERLET);
		if (solver) /* no pull back to the rest direction: hanging is gravity's */
			for (int j = 0; j < N - 1; j++) {
				d.strands[0].joints[j].stiffness = 0;
				d.strands[0].joints[j].gravity_power = 1;
			}
		pt_id id = pt_world_create_instance(w, &d, head_at(0, ROOT_Y, 0));
		pt_vec3 p[N], from = pt_v3(0, ROOT_Y - 0.15f, 0), to = pt_v3(0.1f, ROOT_Y - 0.1f, 0);
		for (int k = 0; k < 360; k++) {
			pt_vec3 a = v3lerp_test(from, to, k < 30 ? k / 30.0f : 1.0f);
			pt_vec3 b = v3lerp_test(from, to, k < 29 ? (k + 1) / 30.0f : 1.0f);
			pt_grab g = grab(5, a, b);
			assert_int_equal(pt_world_set_grabs(w, id, &g, 1), 1);
			pt_world_step(w, 1.0f / 60.0f, 4);
			pt_world_read_points(w, id, p, N);
			if (dlen(dsub(D(p[5]), D(b))) > 0.001)
				print_error("solver %d tick %d: %.6f from target\n", solver, k,
				            dlen(dsub(D(p[5]), D(b))));
			assert_true(dlen(dsub(D(p[5]), D(b))) <= 0.001);
			assert_true(length_error(p) <= 1e-5);
		}
		/* verlet: straight down within 1 mm. The spring bone's step moves the grabbed
		 * point before the grab puts it back, and its tails past it follow where the step
		 * put it (core/README.md "Touch and grabs", known limit): they hang below it,
		 * each segment within 30 degrees of the vertical */
		for (int j = 6; j < N; j++) {
			double dx = (double)p[j].x - p[j - 1].x, dy = (double)p[j].y - p[j - 1].y;
			double lean = atan2(fabs(dx), -dy) * 180 / 3.14159265358979;
			if (solver == 0 &&
			    !(fabs((double)p[j].x - p[5].x) <= 0.001 && fabs((double)p[j].z) <= 0.001))
				print_error("verlet point %d: %.6f %.6f %.6f (grabbed %.6f %.6f)\n", j,
				            p[j].x, p[j].y, p[j].z, p[5].x, p[5].y);
			if (solver == 0)
				assert_true(fabs((double)p[j].x - p[5].x) <= 0.001 && fabs((double)p[j].z) <= 0.001);
			else
				assert_true(lean < 30.0 && fabs((double)p[j].z) <= 0.001);
		}
		pt_world_destroy(w);
		pt_instance_def_fini(&d);
	}
}

/* ---- the hanging chain ------------------------------------------------------------------ */

/* The discrete catenary, solved here: a planar chain of n segments of length L from A to B
 * (B.x > A.x) with masses m[1 .. n-1] at its joints, rigid segments, gravity g down. The
 * horizontal tension H is the same in every segment and the vertical one grows by each
 * joint's weight, so segment k's slope is tan(phi_k) = s + (g / H) M_k, M_k the mass of
 * joints 1 .. k-1. Given c = g / H the slope s of the first segment is found by bisection
 * on the vertical span (which grows with s), then c by bisection on the horizontal span
 * (which shrinks as c grows: more sag). Writes the n + 1 points (x, y) and the slopes. */
static void catenary(int n, double L, const double *m, double ax, double ay, double bx,
                     double by, double *x, double *y, double *slope)
{
	double M[PT_MAX_POINTS];
	M[1] = 0;
	for (int k = 2; k <= n; k++)
		M[k] = M[k - 1] + m[k - 1];
	double clo = log(1e-6), chi = log(1e6), s = 0;
	for (int outer = 0; outer < 200; outer++) {
		double c = exp(0.5 * (clo + chi));
		double plo = -1.5707963, phi = 1.5707963;
		for (int inner = 0; inner < 200; inner++) {
			s = tan(0.5 * (plo + phi));
			double vy = 0;
			for (int k = 1; k <= n; k++) {
				double t = s + c * M[k];
				vy += L * t / sqrt(1 + t * t);
			}
			if (vy < by - ay)
				plo = 0.5 * (plo + phi);
			else
				phi = 0.5 * (plo + phi);
		}
		double vx = 0;
		for (int k = 1; k <= n; k++) {
			double t = s + c * M[k];
			vx += L / sqrt(1 + t * t);
		}
		if (vx > bx - ax)
			clo = 0.5 * (clo + chi);
		else
			chi = 0.5 * (clo + chi);
	}
	double c = exp(0.5 * (clo + chi));
	x[0] = ax, y[0] = ay;
	for (int k = 1; k <= n; k++) {
		double t = s + c * M[k];
		slope[k] = t;
		x[k] = x[k - 1] + L / sqrt(1 + t * t);
		y[k] = y[k - 1] + L * t / sqrt(1 + t * t);
	}
}

/* The verlet chain (masses 1 at point 1 growing to 3 at the tip, no bending) held at its
 * root and by its tip 20 cm to the side and 10 cm down, the target still: after 10 s it
 * hangs as the discrete catenary between those two points does. Checked two ways: the
 * slope increments tan(phi_{k+1}) - tan(phi_k) over the joint masses m_k are one constant
 * g / H (within 0.5 %), and every point lies within 0.2 mm of the catenary solved above.
 * Why these bounds: the swing decays by (0.96^60 e^-2)^10 ~ 1e-19 in 10 s (damping and
 * air drag), so what is left is the fixed point of the substep, whose length solve stops
 * at |q^2 - L^2| <= 1e-4 L^2 (PT_SOLVE_TOL, about 1.5 um on a 3 cm segment) and leaves
 * the rest to follow-the-leader: a force error of 1.5 um / (g h^2 = 0.68 mm at 2
 * substeps) ~ 0.2 % of a joint's weight, and ~10 um on the positions; float rounding at
 * 1.5 m is 0.1 um. Measured: 1 um and 0.02 %. A wrong mass law (uniform masses) puts
 * the points up to 5.9 mm off and the increments 71 % apart. */
static void test_catenary(void **state)
{
	(void)state;
	pt_world *w = pt_world_create(NULL);
	pt_instance_def d;
	hanging(&d, PT_SOLVER_VERLET);
	d.strands[0].mass_root = 1.0f;
	d.strands[0].mass_tip = 3.0f;
	pt_id id = pt_world_create_instance(w, &d, head_at(0, ROOT_Y, 0));
	pt_vec3 from = pt_v3(0, ROOT_Y - 0.33f, 0), to = pt_v3(0.2f, ROOT_Y - 0.1f, 0), p[N];
	for (int k = 0; k < 630; k++) {
		pt_vec3 a = v3lerp_test(from, to, k < 30 ? k / 30.0f : 1.0f);
		pt_vec3 b = v3lerp_test(from, to, k < 29 ? (k + 1) / 30.0f : 1.0f);
		pt_grab g = grab(N - 1, a, b);
		assert_int_equal(pt_world_set_grabs(w, id, &g, 1), 1);
		pt_world_step(w, 1.0f / 60.0f, 2);
	}
	pt_world_read_points(w, id, p, N);
	double m[N], x[N], y[N], slope[N];
	for (int j = 1; j < N - 1; j++) /* the definition's law: linear from root to tip */
		m[j] = 1.0 + 2.0 * (j - 1) / (N - 2);
	catenary(N - 1, SEG, m, p[0].x, p[0].y, p[N - 1].x, p[N - 1].y, x, y, slope);
	double worst = 0;
	for (int j = 0; j < N; j++)
		worst = fmax(worst, hypot(p[j].x - x[j], p[j].y - y[j]));
	double inc[N], mean = 0;
	for (int k = 1; k < N - 1; k++) {
		double t0 = ((double)p[k].y - p[k - 1].y) / ((double)p[k].x - p[k - 1].x);
		double t1 = ((double)p[k + 1].y - p[k].y) / ((double)p[k + 1].x - p[k].x);
		inc[k] = (t1 - t0) / m[k];
		mean += inc[k] / (N - 2);
	}
	double spread = 0;
	for (int k = 1; k < N - 1; k++)
		spread = fmax(spread, fabs(inc[k] / mean - 1));
	print_message("catenary: worst point %.2e m, increments/mass spread %.2e\n", worst, spread);
	assert_true(worst <= 2e-4);
	assert_true(spread <= 0.005);
	for (int j = 0; j < N; j++)
		assert_true(fabs(p[j].z) < 1e-6);
	pt_world_destroy(w);
	pt_instance_def_fini(&d);
}

/* ---- one step only ----------------------------------------------------------------------- */

/* A hand that came in and stopped in the hair, then was no longer set: the hair swings
 * back through where the hand was and hangs straight (no ghost), within 1 mm after 5 s.
 * A grab released the same way lets the tip fall back. */
static void test_no_ghost(void **state)
{
	(void)state;
	for (int solver = 0; solver < 2; solver++) {
		pt_world *w = pt_world_create(NULL);
		pt_instance_def d;
		hanging(&d, solver ? PT_SOLVER_SPRINGBONE : PT_SOLVER_VERLET);
		pt_id id = pt_world_create_instance(w, &d, head_at(0, ROOT_Y, 0));
		pt_vec3 p[N];
		double pushed = 0;
		for (int k = 0; k < 60; k++) {
			pt_touch t;
			memset(&t, 0, sizeof t);
			t.shape = PT_SHAPE_CAPSULE, t.radius = HAND_R;
			hand_at(0.5, fmin(k, 40) / 60.0, &t.a0, &t.b0);
			hand_at(0.5, fmin(k + 1, 40) / 60.0, &t.a1, &t.b1);
			assert_int_equal(pt_world_set_touch(w, id, &t, 1), 1);
			pt_world_step(w, 1.0f / 60.0f, 4);
			pt_world_read_points(w, id, p, N);
			pushed = fmax(pushed, p[7].x);
		}
		assert_true(pushed > 0.05);
		for (int k = 0; k < 300; k++)
			pt_world_step(w, 1.0f / 60.0f, 4);
		pt_world_read_points(w, id, p, N);
		for (int j = 0; j < N; j++)
			assert_true(fabs(p[j].x) < 0.001);
		pt_grab g = grab(N - 1, pt_v3(0.2f, ROOT_Y, 0), pt_v3(0.2f, ROOT_Y, 0));
		for (int k = 0; k < 30; k++) {
			assert_int_equal(pt_world_set_grabs(w, id, &g, 1), 1);
			pt_world_step(w, 1.0f / 60.0f, 4);
		}
		pt_world_read_points(w, id, p, N);
		assert_true(p[N - 1].y > ROOT_Y - 0.1f);
		for (int k = 0; k < 300; k++)
			pt_world_step(w, 1.0f / 60.0f, 4);
		pt_world_read_points(w, id, p, N);
		assert_true(fabs(p[N - 1].x) < 0.001 && p[N - 1].y < ROOT_Y - 0.32f);
		pt_world_destroy(w);
		pt_instance_def_fini(&d);
	}
}

/* What a step does with touch it cannot use: a hand 5 m away leaves the instance on its
 * usual path, bit for bit the state of a twin never touched; touch set and then cleared
 * (n = 0) is no touch; touch given for tick 0 only acts at tick 0: a twin that was told
 * n = 0 before tick 1 stays bit-identical to one told nothing. */
static void test_one_step(void **state)
{
	(void)state;
	for (int solver = 0; solver < 2; solver++) {
		pt_world *w[3];
		pt_id id[3];
		pt_instance_def d;
		hanging(&d, solver ? PT_SOLVER_SPRINGBONE : PT_SOLVER_VERLET);
		d.springbone.rate = PT_SPRINGBONE_RATE_SUBSTEP;
		for (int i = 0; i < 3; i++) {
			w[i] = pt_world_create(NULL);
			id[i] = pt_world_create_instance(w[i], &d, head_at(0, ROOT_Y, 0));
		}
		pt_touch far, near;
		memset(&far, 0, sizeof far);
		far.shape = PT_SHAPE_SPHERE, far.radius = 0.1f;
		far.a0 = far.a1 = pt_v3(5, ROOT_Y, 0);
		near = far;
		near.a0 = pt_v3(-0.05f, ROOT_Y - 0.2f, 0), near.a1 = pt_v3(0.02f, ROOT_Y - 0.2f, 0);
		for (int k = 0; k < 120; k++) {
			pt_world_set_head(w[0], id[0], head_at(0.002f * k, ROOT_Y, 0));
			pt_world_set_head(w[1], id[1], head_at(0.002f * k, ROOT_Y, 0));
			assert_int_equal(pt_world_set_touch(w[1], id[1], &far, 1), 1);
			if (k % 3 == 0) { /* set, then cleared before the step */
				assert_int_equal(pt_world_set_touch(w[0], id[0], &near, 1), 1);
				assert_int_equal(pt_world_set_touch(w[0], id[0], NULL, 0), 1);
			}
			pt_world_step(w[0], 1.0f / 60.0f, 4);
			pt_world_step(w[1], 1.0f / 60.0f, 4);
			assert_true(pt_world_state_hash(w[0], id[0]) == pt_world_state_hash(w[1], id[1]));
		}
		pt_world *t[2];
		pt_id tid[2];
		for (int i = 0; i < 2; i++) {
			t[i] = pt_world_create(NULL);
			tid[i] = pt_world_create_instance(t[i], &d, head_at(0, ROOT_Y, 0));
			assert_int_equal(pt_world_set_touch(t[i], tid[i], &near, 1), 1);
		}
		uint64_t untouched = pt_world_state_hash(w[2], id[2]);
		for (int k = 0; k < 60; k++) {
			if (k == 1)
				assert_int_equal(pt_world_set_touch(t[1], tid[1], NULL, 0), 1);
			pt_world_step(t[0], 1.0f / 60.0f, 4);
			pt_world_step(t[1], 1.0f / 60.0f, 4);
			pt_world_step(w[2], 1.0f / 60.0f, 4);
			assert_true(pt_world_state_hash(t[0], tid[0]) == pt_world_state_hash(t[1], tid[1]));
			if (k == 0) /* and the touch did act */
				assert_true(pt_world_state_hash(t[0], tid[0]) != pt_world_state_hash(w[2], id[2]));
		}
		(void)untouched;
		for (int i = 0; i < 3; i++)
			pt_world_destroy(w[i]);
		for (int i = 0; i < 2; i++)
			pt_world_destroy(t[i]);
		pt_instance_def_fini(&d);
	}
}

/* ---- kernels ------------------------------------------------------------------------------ */

/* The same scene on the plain-C and the AVX2 kernels: verlet (one strand; three strands
 * with self-collision off and 2 substeps of their own), spring bones at substep and frame
 * rate, swept by two hands and grabbed in turn: every instance's state hash equal after
 * every tick. */
static void test_kernels_agree(void **state)
{
	(void)state;
	pt_world *w[2];
	pt_id id[2][4];
	for (int k = 0; k < 2; k++) {
		pt_world_def wd = pt_world_def_default();
		wd.kernel = k ? PT_KERNEL_AVX2 : PT_KERNEL_SCALAR;
		w[k] = pt_world_create(&wd);
		for (int i = 0; i < 4; i++) {
			pt_instance_def d;
			hanging(&d, i < 2 ? PT_SOLVER_VERLET : PT_SOLVER_SPRINGBONE);
			d.springbone.rate = i == 2 ? PT_SPRINGBONE_RATE_SUBSTEP : PT_SPRINGBONE_RATE_FRAME;
			if (i == 1) {
				tdef_strands(&d, 3);
				for (int s = 1; s < 3; s++) {
					pt_strand_def_copy(&d.strands[s], &d.strands[0]);
					d.strands[s].anchor = pt_v3(0.03f * s, 0, 0);
					d.strands[s].points = 8 + s;
				}
				d.substeps = 2;
			}
			assert_true(pt_instance_validate(&d).ok);
			id[k][i] = pt_world_create_instance(w[k], &d, head_at(0.5f * i, ROOT_Y, 0));
			pt_instance_def_fini(&d);
		}
	}
	if (pt_world_kernel(w[1]) != PT_KERNEL_AVX2)
		print_message("no AVX2 here: both worlds run the plain-C kernel\n");
	for (int t = 0; t < 150; t++)
		for (int k = 0; k < 2; k++) {
			for (int i = 0; i < 4; i++) {
				pt_touch h[2];
				memset(h, 0, sizeof h);
				for (int j = 0; j < 2; j++) {
					h[j].shape = j ? PT_SHAPE_SPHERE : PT_SHAPE_CAPSULE;
					h[j].radius = 0.04f;
					float off = 0.5f * i + (j ? 0.02f : 0.0f), y = ROOT_Y - 0.1f - 0.1f * j;
					hand_at(1.0, t / 60.0, &h[j].a0, &h[j].b0);
					hand_at(1.0, (t + 1) / 60.0, &h[j].a1, &h[j].b1);
					h[j].a0.x += off, h[j].a1.x += off, h[j].b0.x += off, h[j].b1.x += off;
					h[j].a0.y = h[j].b0.y = h[j].a1.y = h[j].b1.y = y;
				}
				assert_int_equal(pt_world_set_touch(w[k], id[k][i], h, 2), 1);
				if (t > 80) {
					float x = 0.5f * i + 0.1f;
					pt_grab g = grab(6, pt_v3(x, ROOT_Y - 0.15f, 0.0f),
					                 pt_v3(x, ROOT_Y - 0.15f + 0.001f * (t - 80), 0.0f));
					assert_int_equal(pt_world_set_grabs(w[k], id[k][i], &g, 1), 1);
				}
			}
			pt_world_step(w[k], 1.0f / 60.0f, 4);
			if (k == 1)
				for (int i = 0; i < 4; i++)
					assert_true(pt_world_state_hash(w[0], id[0][i]) ==
					            pt_world_state_hash(w[1], id[1][i]));
		}
	for (int k = 0; k < 2; k++)
		pt_world_destroy(w[k]);
}

/* ---- checks ----------------------------------------------------------------------------- */

static void expect_field(pt_error e, const char *field)
{
	if (e.ok || strcmp(e.field, field) != 0)
		print_error("expected %s, got ok %d field '%s' (%s)\n", field, e.ok, e.field, e.message);
	assert_false(e.ok);
	assert_string_equal(e.field, field);
	assert_non_null(strstr(e.message, field));
}

/* Each bad value names its field (and the message its range); set refuses it and keeps
 * what was set; a stale id is 0; more than PT_MAX_TOUCH or PT_MAX_GRABS is refused. */
static void test_validate(void **state)
{
	(void)state;
	pt_touch t[PT_MAX_TOUCH + 1];
	memset(t, 0, sizeof t);
	for (int i = 0; i <= PT_MAX_TOUCH; i++)
		t[i].shape = PT_SHAPE_SPHERE, t[i].radius = 0.04f;
	assert_true(pt_touch_validate(t, 4).ok);
	assert_true(pt_touch_validate(NULL, 0).ok);
	t[3].radius = 0.0f;
	expect_field(pt_touch_validate(t, 4), "touch[3].radius");
	assert_non_null(strstr(pt_touch_validate(t, 4).message, "[0.001, 1]"));
	t[3].radius = NAN;
	expect_field(pt_touch_validate(t, 4), "touch[3].radius");
	t[3].radius = 1.5f;
	expect_field(pt_touch_validate(t, 4), "touch[3].radius");
	t[3].radius = 0.04f;
	t[1].shape = PT_SHAPE_ELLIPSOID;
	expect_field(pt_touch_validate(t, 4), "touch[1].shape");
	t[1].shape = PT_SHAPE_CAPSULE;
	t[1].b1 = pt_v3(0, INFINITY, 0);
	expect_field(pt_touch_validate(t, 4), "touch[1].b1");
	t[1].b1 = pt_v3(0, 0, 0);
	t[2].a0 = pt_v3(NAN, 0, 0);
	expect_field(pt_touch_validate(t, 4), "touch[2].a0");
	t[2].a0 = pt_v3(0, 0, 0);
	t[0].a1 = pt_v3(20000, 0, 0);
	expect_field(pt_touch_validate(t, 4), "touch[0].a1");
	t[0].a1 = pt_v3(0, 0, 0);
	assert_false(pt_touch_validate(t, PT_MAX_TOUCH + 1).ok);
	assert_false(pt_touch_validate(t, -1).ok);
	assert_true(pt_touch_validate(t, PT_MAX_TOUCH).ok);

	int points[2] = {12, 4};
	pt_grab g[PT_MAX_GRABS + 1];
	memset(g, 0, sizeof g);
	for (int i = 0; i <= PT_MAX_GRABS; i++)
		g[i].strand = i & 1, g[i].point = 1 + i / 2;
	assert_true(pt_grabs_validate(g, 4, 2, points).ok);
	g[1].strand = 2;
	expect_field(pt_grabs_validate(g, 4, 2, points), "grabs[1].strand");
	g[1].strand = 1;
	g[3].point = 4;
	expect_field(pt_grabs_validate(g, 4, 2, points), "grabs[3].point");
	g[3].point = 0;
	expect_field(pt_grabs_validate(g, 4, 2, points), "grabs[3].point");
	g[3].point = 1; /* grabs[1] holds point 1 of strand 1 */
	expect_field(pt_grabs_validate(g, 4, 2, points), "grabs[3].point");
	g[3].point = 2;
	g[2].t1 = pt_v3(0, 0, -INFINITY);
	expect_field(pt_grabs_validate(g, 4, 2, points), "grabs[2].t1");
	g[2].t1 = pt_v3(0, 0, 0);
	g[0].t0 = pt_v3(0, NAN, 0);
	expect_field(pt_grabs_validate(g, 4, 2, points), "grabs[0].t0");
	g[0].t0 = pt_v3(0, 0, 0);
	assert_false(pt_grabs_validate(g, PT_MAX_GRABS + 1, 2, points).ok);

	pt_world *w = pt_world_create(NULL);
	pt_instance_def d;
	hanging(&d, PT_SOLVER_VERLET);
	pt_id id = pt_world_create_instance(w, &d, head_at(0, ROOT_Y, 0));
	pt_grab one = grab(11, pt_v3(0, 0, 0), pt_v3(0, 0, 0));
	assert_int_equal(pt_world_set_touch(w, id, t, 4), 1);
	assert_int_equal(pt_world_set_touch(w, id, t, PT_MAX_TOUCH + 1), 0);
	assert_int_equal(pt_world_set_touch(w, id, t, PT_MAX_TOUCH), 1);
	assert_int_equal(pt_world_set_touch(w, id, NULL, 3), 0);
	assert_int_equal(pt_world_set_grabs(w, id, &one, 1), 1);
	one.point = 12;
	assert_int_equal(pt_world_set_grabs(w, id, &one, 1), 0);
	one.point = 11;
	assert_int_equal(pt_world_set_grabs(w, id, g, PT_MAX_GRABS + 1), 0);
	pt_world_destroy_instance(w, id);
	assert_int_equal(pt_world_set_touch(w, id, t, 1), 0);
	assert_int_equal(pt_world_set_grabs(w, id, &one, 1), 0);
	pt_world_destroy(w);
	pt_instance_def_fini(&d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_verlet_sweep),  cmocka_unit_test(test_springbone_sweep),
	    cmocka_unit_test(test_grab_tip),      cmocka_unit_test(test_grab_middle),
	    cmocka_unit_test(test_catenary),      cmocka_unit_test(test_no_ghost),
	    cmocka_unit_test(test_one_step),      cmocka_unit_test(test_kernels_agree),
	    cmocka_unit_test(test_validate),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
