/* The checks of touch and grabs (ponytail/touch.h): every field against its range, the
 * first error naming it as "touch[3].radius" or "grabs[1].point" with the range allowed.
 * Non-finite values are refused. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h> /* snprintf only: core does no I/O */
#include <string.h>

#include "ponytail/touch.h"
#include "vecmath.h"

_Static_assert(sizeof(pt_touch) == 14 * 4, "pt_touch: four-byte members, no padding");
_Static_assert(sizeof(pt_grab) == 8 * 4, "pt_grab: four-byte members, no padding");

__attribute__((format(printf, 5, 6))) static pt_error fail(const char *what, int i,
                                                           const char *field, const char *unit,
                                                           const char *fmt, ...)
{
	pt_error e;
	memset(&e, 0, sizeof e);
	if (i >= 0)
		snprintf(e.field, sizeof e.field, "%s[%d]%s%s", what, i, *field ? "." : "", field);
	else
		snprintf(e.field, sizeof e.field, "%s", what);
	char msg[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	snprintf(e.message, sizeof e.message, "%s: %s%s", e.field, msg, unit);
	return e;
}

static int point_ok(pt_vec3 p)
{
	return v3_finite(p) && v3_len(p) <= 10000.0f;
}

#define WHERE "expected [x, y, z] in metres, finite, within 10000 of the origin"

pt_error pt_touch_validate(const pt_touch *t, int n)
{
	pt_error ok;
	memset(&ok, 0, sizeof ok);
	ok.ok = 1;
	if (n < 0 || n > PT_MAX_TOUCH)
		return fail("touch", -1, "", "", "%d touch colliders; allowed [0, %d]", n,
		            (int)PT_MAX_TOUCH);
	if (n > 0 && !t)
		return fail("touch", -1, "", "", "missing");
	for (int i = 0; i < n; i++) {
		const pt_touch *k = &t[i];
		if (k->shape != PT_SHAPE_SPHERE && k->shape != PT_SHAPE_CAPSULE)
			return fail("touch", i, "shape", "", "must be sphere (%d) or capsule (%d)",
			            (int)PT_SHAPE_SPHERE, (int)PT_SHAPE_CAPSULE);
		if (!(isfinite(k->radius) && k->radius >= 0.001f && k->radius <= 1.0f))
			return fail("touch", i, "radius", " (m)", "must be a number in [0.001, 1]");
		if (!point_ok(k->a0))
			return fail("touch", i, "a0", "", WHERE);
		if (!point_ok(k->a1))
			return fail("touch", i, "a1", "", WHERE);
		/* a sphere's b ends are not read: a host may leave them unset */
		if (k->shape == PT_SHAPE_CAPSULE && !point_ok(k->b0))
			return fail("touch", i, "b0", "", WHERE);
		if (k->shape == PT_SHAPE_CAPSULE && !point_ok(k->b1))
			return fail("touch", i, "b1", "", WHERE);
	}
	return ok;
}

pt_error pt_grabs_validate(const pt_grab *g, int n, int strand_count, const int *points)
{
	pt_error ok;
	memset(&ok, 0, sizeof ok);
	ok.ok = 1;
	if (n < 0 || n > PT_MAX_GRABS)
		return fail("grabs", -1, "", "", "%d grabs; allowed [0, %d]", n, (int)PT_MAX_GRABS);
	if (n > 0 && (!g || !points))
		return fail("grabs", -1, "", "", "missing");
	for (int i = 0; i < n; i++) {
		const pt_grab *k = &g[i];
		if (k->strand < 0 || k->strand >= strand_count)
			return fail("grabs", i, "strand", "", "must be an integer in [0, %d]",
			            strand_count - 1);
		if (k->point < 1 || k->point >= points[k->strand])
			return fail("grabs", i, "point", "", "must be an integer in [1, %d] (the root cannot be grabbed)",
			            points[k->strand] - 1);
		if (!point_ok(k->t0))
			return fail("grabs", i, "t0", "", WHERE);
		if (!point_ok(k->t1))
			return fail("grabs", i, "t1", "", WHERE);
		for (int j = 0; j < i; j++)
			if (g[j].strand == k->strand && g[j].point == k->point)
				return fail("grabs", i, "point", "",
				            "point %d of strand %d is grabbed by grabs[%d] already",
				            k->point, k->strand, j);
	}
	return ok;
}

