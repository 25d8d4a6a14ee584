/* vrm_springs: reading a VRM's spring bones, as the file has them (see vrm_springs.h):
 * the diagnostics, the reader helpers both versions use, the head bone and
 * vrm_springs_read. The readers themselves are vrm_springs_v1.c and vrm_springs_v0.c.
 *
 * VRM 1.0 lists its chains (springs of joints), colliders and collider groups directly.
 * VRM 0.x lists bone groups of root bones, whose every descendant path is a chain, and
 * collider groups that each own their sphere colliders; those are flattened (in
 * vrm_springs_v0.c) into the same chains and colliders, with each group's settings copied
 * onto its chains.
 */
#include "vrm_springs.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vrm_springs_internal.h"

const char *const vrm_shape_names[] = {"sphere", "capsule", "plane", "inside_sphere",
                                       "inside_capsule"};

/* ---- diagnostics ---- */

static const char *const tally_text[VRM_T_COUNT] = {
    [VRM_T_CLAMPED] = "parameter values outside the ranges ponytail accepts were clamped",
    [VRM_T_NONHEAD_CHAIN] = "chains hang from nodes under no humanoid bone: anchored to the "
                            "head at their rest offset, so they follow the head",
    [VRM_T_NONHEAD_COLLIDER] = "colliders sit on nodes under no humanoid bone: attached to "
                               "the head at their rest offset, so they follow the head",
    [VRM_T_BRANCH] = "chains branch off a chain that was not imported: they hang from "
                     "their bone at their rest offset instead of following that chain",
    [VRM_T_REUSED] = "chains reuse a joint of an earlier chain (VRM forbids it): cut before "
                     "the shared joint",
    [VRM_T_ORDER] = "springs list a joint that is not a descendant of the previous one: "
                    "positions used as given",
    [VRM_T_SCALE] = "nodes have a scale other than 1: positions are world metres, collider "
                    "radii are multiplied by their node's largest scale (as UniVRM does), "
                    "hit_radius is not",
    [VRM_T_CENTER] = "springs use a center node other than the head or a root: inertia is "
                     "measured in the world instead",
    [VRM_T_SPHERICAL] = "joints have a spherical angle limit, which ponytail does not "
                        "support: written as no limit",
    [VRM_T_TILT] = "angle limits are rotated away from their segment's rest direction: "
                   "ponytail centres them on the rest direction",
    [VRM_T_SHORT] = "chains have fewer than 2 points or segments outside [1 mm, 1 m]: dropped",
    [VRM_T_NO_TAIL] = "leaf joints have no direction for VRM 0.x's 7 cm virtual tail: the "
                      "chain ends at the leaf",
    [VRM_T_BAD_COLLIDER] = "colliders have no usable node or shape: skipped",
    [VRM_T_ZERO_SEGMENT] = "chains have zero-length segments (two joints at one place)",
    [VRM_T_LIMIT_VERSION] = "angle limits have an unknown VRMC_springBone_limit specVersion: "
                            "ignored",
};

int vrm_diag_init(vrm_diag *d)
{
	memset(d, 0, sizeof *d);
	d->notes = json_array();
	d->warnings = json_array();
	return d->notes && d->warnings ? 0 : -1;
}

void vrm_diag_free(vrm_diag *d)
{
	if (!d)
		return;
	json_decref(d->notes);
	json_decref(d->warnings);
	memset(d, 0, sizeof *d);
}

static void add_text(json_t *arr, const char *fmt, va_list ap)
{
	char buf[512];
	vsnprintf(buf, sizeof buf, fmt, ap);
	json_array_append_new(arr, json_string(buf));
}

void vrm_warn(vrm_diag *d, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	add_text(d->warnings, fmt, ap);
	va_end(ap);
}

void vrm_note(vrm_diag *d, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	add_text(d->notes, fmt, ap);
	va_end(ap);
}

void vrm_tally(vrm_diag *d, vrm_tally_id id, const char *fmt, ...)
{
	if (d->tallies[id].count++ == 0) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(d->tallies[id].first, sizeof d->tallies[id].first, fmt, ap);
		va_end(ap);
	}
}

void vrm_diag_flush(vrm_diag *d)
{
	for (int i = 0; i < VRM_T_COUNT; i++)
		if (d->tallies[i].count)
			vrm_warn(d, "%s (%d; first: %s)", tally_text[i], d->tallies[i].count,
			         d->tallies[i].first);
}

double vrm_clamp(vrm_diag *d, double v, double lo, double hi, const char *path, const char *key)
{
	double r = v < lo ? lo : v > hi ? hi : v;
	if (r != v)
		vrm_tally(d, VRM_T_CLAMPED, "%s.%s %g -> %g", path, key, v, r);
	return r;
}

/* ---- reader helpers, for both versions (vrm_springs_internal.h) ---- */

/* The ranges core validates (instance.h), so an imported definition is always accepted. */
void vrm_rd_clamp_params(rd *c, vrm_segment *sp, const char *path, int v1)
{
	sp->stiffness =
	    vrm_clamp(c->d, sp->stiffness, 0, 100, path, v1 ? "stiffness" : "stiffiness");
	sp->drag = vrm_clamp(c->d, sp->drag, 0, 1, path, "dragForce");
	sp->gravity_power = vrm_clamp(c->d, sp->gravity_power, 0, 100, path, "gravityPower");
	sp->hit_radius = vrm_clamp(c->d, sp->hit_radius, 0, 1, path, "hitRadius");
}

vrm_chain *vrm_rd_new_chain(rd *c)
{
	vrm_springs *s = c->s;
	if (s->nchains == VRM_MAX_READ) {
		vrm_fail(c->err, c->errlen,
		         "more than %d spring-bone chains: not an avatar this importer reads",
		         VRM_MAX_READ);
		return NULL;
	}
	if (s->nchains == s->chains_cap) {
		int cap = s->chains_cap ? s->chains_cap * 2 : 16;
		vrm_chain *p = realloc(s->chains, sizeof *p * (size_t)cap);
		if (!p) {
			vrm_fail(c->err, c->errlen, "out of memory");
			return NULL;
		}
		s->chains = p;
		s->chains_cap = cap;
	}
	vrm_chain *ch = &s->chains[s->nchains++];
	memset(ch, 0, sizeof *ch);
	ch->center = -1;
	ch->name = "";
	return ch;
}

/* Adds the colliders of group gi to the chain, each once, at its first place (a strand
 * lists a collider once; three-vrm, meeting it in two of the spring's groups, would
 * push the tail out of it twice: said in a warning). */
static int chain_add_group(rd *c, vrm_chain *ch, int gi)
{
	const group *gr = &c->groups[gi];
	for (int k = 0; k < gr->count; k++) {
		int m = gr->members[k], seen = 0;
		for (int i = 0; i < ch->ncolliders && !seen; i++)
			seen = ch->colliders[i] == m;
		if (seen) {
			vrm_warn(c->d,
			         "%s lists collider %d more than once (through its collider "
			         "groups): it is taken at its first place only (three-vrm pushes "
			         "out of it again at each)",
			         ch->source[0] ? ch->source : "a chain", m);
			continue;
		}
		int *p = realloc(ch->colliders, sizeof *p * (size_t)(ch->ncolliders + 1));
		if (!p)
			return vrm_fail(c->err, c->errlen, "out of memory");
		ch->colliders = p;
		ch->colliders[ch->ncolliders++] = m;
	}
	return 0;
}

/* obj.colliderGroups: indices of collider groups, whose colliders are added. */
int vrm_rd_chain_add_groups(rd *c, vrm_chain *ch, const json_t *obj, const char *path)
{
	json_t *arr;
	if (vrm_json_child(obj, "colliderGroups", 1, path, &arr, c->err, c->errlen))
		return -1;
	for (size_t i = 0; arr && i < json_array_size(arr); i++) {
		char p[160];
		int gi;
		vrm_pathf(p, sizeof p, "%s.colliderGroups[%zu]", path, i);
		if (vrm_json_index(json_array_get(arr, i), c->ngroups, "collider group", p, &gi,
		                   c->err, c->errlen) ||
		    chain_add_group(c, ch, gi))
			return -1;
	}
	return 0;
}

int vrm_rd_check_count(rd *c, const json_t *arr, const char *path)
{
	if (arr && json_array_size(arr) > VRM_MAX_READ)
		return vrm_fail(c->err, c->errlen,
		                "%s: %zu entries, more than the %d this importer reads", path,
		                json_array_size(arr), VRM_MAX_READ);
	return 0;
}

/* ---- the head bone ---- */

static int find_head(rd *c)
{
	json_t *exts = json_object_get(c->doc, "extensions"), *hb, *h;
	if (c->s->v1) {
		json_t *vrmc = json_object_get(exts, "VRMC_vrm");
		if (!json_is_object(vrmc))
			return vrm_fail(
			    c->err, c->errlen,
			    "missing head bone: extensions.VRMC_vrm (the humanoid) is absent");
		if (vrm_json_child(vrmc, "humanoid", 0, "extensions.VRMC_vrm", &h, c->err,
		                   c->errlen) ||
		    vrm_json_child(h, "humanBones", 0, "extensions.VRMC_vrm.humanoid", &hb, c->err,
		                   c->errlen) ||
		    vrm_json_child(hb, "head", 0, "extensions.VRMC_vrm.humanoid.humanBones", &h,
		                   c->err, c->errlen))
			return -1;
		if (!h)
			return vrm_fail(c->err, c->errlen,
			                "missing head bone: "
			                "extensions.VRMC_vrm.humanoid.humanBones.head "
			                "is absent");
		return vrm_json_index(json_object_get(h, "node"), c->g->count, "node",
		                      "extensions.VRMC_vrm.humanoid.humanBones.head.node",
		                      &c->s->head, c->err, c->errlen);
	}
	json_t *vrm = json_object_get(exts, "VRM");
	if (vrm_json_child(vrm, "humanoid", 0, "extensions.VRM", &h, c->err, c->errlen) ||
	    vrm_json_child(h, "humanBones", 1, "extensions.VRM.humanoid", &hb, c->err, c->errlen))
		return -1;
	for (size_t i = 0; hb && i < json_array_size(hb); i++) {
		const json_t *b = json_array_get(hb, i);
		const char *bone = json_string_value(json_object_get(b, "bone"));
		if (bone && strcmp(bone, "head") == 0) {
			char p[96];
			vrm_pathf(p, sizeof p, "extensions.VRM.humanoid.humanBones[%zu].node", i);
			return vrm_json_index(json_object_get(b, "node"), c->g->count, "node", p,
			                      &c->s->head, c->err, c->errlen);
		}
	}
	return vrm_fail(c->err, c->errlen,
	                "missing head bone: extensions.VRM.humanoid.humanBones "
	                "has no entry with \"bone\": \"head\"");
}
int vrm_springs_read(const json_t *doc, const vrm_graph *g, vrm_springs *s, vrm_diag *d, char *err,
                     size_t errlen)
{
	rd c = {doc, g, s, d, NULL, 0, err, errlen};
	json_t *exts;
	int rc;
	memset(s, 0, sizeof *s);
	if (vrm_json_child(doc, "extensions", 0, "glTF", &exts, err, errlen))
		return -1;
	int has1 = json_object_get(exts, "VRMC_vrm") || json_object_get(exts, "VRMC_springBone");
	int has0 = json_object_get(exts, "VRM") != NULL;
	if (!has1 && !has0)
		return vrm_fail(err, errlen,
		                "not a VRM: the file has neither extensions.VRMC_vrm "
		                "(VRM 1.0) nor extensions.VRM (VRM 0.x)");
	s->v1 = has1;
	if (has1 && has0)
		vrm_note(d, "the file has both VRM 1.0 and VRM 0.x extensions: read as VRM 1.0");
	rc = find_head(&c) || (s->v1 ? vrm_read_v1(&c) : vrm_read_v0(&c));
	for (int i = 0; i < c.ngroups; i++)
		free(c.groups[i].members);
	free(c.groups);
	return rc ? -1 : 0;
}

void vrm_springs_free(vrm_springs *s)
{
	if (!s)
		return;
	for (int i = 0; i < s->nchains; i++)
		free(s->chains[i].colliders);
	free(s->chains);
	free(s->colliders);
	memset(s, 0, sizeof *s);
}
