/* `ponytail import-vrm`: the importer's numbers against values worked out by hand, its
 * errors on malformed files, and the command's exit codes.
 *
 * The importer (vrm_import(), ponytail/vrm_import.h) is the schema library's, which
 * tests.mk links; the command (clients/cli/import_vrm.c) is not a library, so its file is
 * compiled into this translation unit. Every avatar is built here: a JSON text (with ' for
 * " to keep it readable) wrapped into GLB bytes by make_glb(). No assets.
 */
#define VRM_NO_COMMANDS_H
#include "../../clients/cli/import_vrm.c"
/* The importer's limits (VRM_MAX_*) and vrm_humanoid_bone(): its private headers. */
#include "../../core/schema/vrm/vrm_humanoid.h"
#include "../../core/schema/vrm/vrm_springs.h"
#include "ponytail/instance.h"
#include "ponytail/schema.h"

#define VRM_PI 3.14159265358979323846 /* M_PI is not in strict C11 */

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>

#include <cmocka.h>

/* ---- building avatars ---- */

/* A copy of s with every ' turned into ". */
static char *dq(const char *s)
{
	char *r = strdup(s);
	for (char *p = r; *p; p++)
		if (*p == '\'')
			*p = '"';
	return r;
}

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v, p[1] = (uint8_t)(v >> 8), p[2] = (uint8_t)(v >> 16),
	p[3] = (uint8_t)(v >> 24);
}

/* A copy of s with the first `from` replaced by `to` (which must be there). */
static char *subst(const char *s, const char *from, const char *to)
{
	const char *p = strstr(s, from);
	size_t n = strlen(s) - strlen(from) + strlen(to);
	char *r = malloc(n + 1);
	assert_non_null(p);
	memcpy(r, s, (size_t)(p - s));
	strcpy(r + (p - s), to);
	strcat(r, p + strlen(from));
	return r;
}

/* GLB bytes: header, the JSON (quotes as '), padded with spaces, and bin_len zero bytes of
 * BIN chunk when bin_len > 0. */
static uint8_t *make_glb(const char *json_q, size_t bin_len, size_t *len)
{
	char *json = dq(json_q);
	size_t jl = strlen(json), jp = (jl + 3) & ~(size_t)3, bp = (bin_len + 3) & ~(size_t)3;
	size_t total = 12 + 8 + jp + (bin_len ? 8 + bp : 0);
	uint8_t *b = calloc(total, 1);
	memcpy(b, "glTF", 4);
	put32(b + 4, 2);
	put32(b + 8, (uint32_t)total);
	put32(b + 12, (uint32_t)jp);
	put32(b + 16, 0x4E4F534A);
	memcpy(b + 20, json, jl);
	memset(b + 20 + jl, ' ', jp - jl);
	if (bin_len) {
		put32(b + 20 + jp, (uint32_t)bp);
		put32(b + 24 + jp, 0x004E4942);
	}
	free(json);
	*len = total;
	return b;
}

/* The VRM 1.0 avatar of several tests: head at (0, 1.6, 0) with rotation HEAD_Q, a 3-joint
 * hair chain on it (segments 0.04 and 0.06 m, straight down), a 2-joint skirt on the hips,
 * a sphere and a capsule on the head, a sphere on the hips, two collider groups. */
static const char *v1_avatar(const char *head_q)
{
	static char buf[4096];
	snprintf(
	    buf, sizeof buf,
	    "{'asset': {'version': '2.0'}, 'extensionsUsed': ['VRMC_vrm', 'VRMC_springBone'],"
	    " 'nodes': ["
	    "  {'name': 'Root', 'children': [1]},"
	    "  {'name': 'Hips', 'translation': [0, 1.0, 0], 'children': [2, 7]},"
	    "  {'name': 'Spine', 'translation': [0, 0.2, 0], 'children': [3]},"
	    "  {'name': 'Neck', 'translation': [0, 0.3, 0], 'children': [4]},"
	    "  {'name': 'Head', 'translation': [0, 0.1, 0], 'rotation': %s, 'children': [5]},"
	    "  {'name': 'HairRoot', 'translation': [0, 0.05, -0.1], 'children': [6]},"
	    "  {'name': 'Hair1', 'translation': [0, -0.04, 0], 'children': [8]},"
	    "  {'name': 'Skirt0', 'translation': [0.1, -0.05, 0], 'children': [9]},"
	    "  {'name': 'Hair2', 'translation': [0, -0.06, 0]},"
	    "  {'name': 'Skirt1', 'translation': [0, -0.2, 0]}],"
	    " 'extensions': {"
	    "  'VRMC_vrm': {'specVersion': '1.0', 'meta': {'name': 'Testy'},"
	    "   'humanoid': {'humanBones': {'head': {'node': 4}, 'hips': {'node': 1}}}},"
	    "  'VRMC_springBone': {'specVersion': '1.0',"
	    "   'colliders': ["
	    "    {'node': 4, 'shape': {'sphere': {'offset': [0, 0.02, 0], 'radius': 0.09}}},"
	    "    {'node': 4, 'shape': {'capsule': {'offset': [0.05, 0, 0], 'tail': [-0.05, 0, 0],"
	    "     'radius': 0.03}}},"
	    "    {'node': 1, 'shape': {'sphere': {'offset': [0, 0, 0], 'radius': 0.12}}}],"
	    "   'colliderGroups': [{'colliders': [0, 1]}, {'colliders': [2]}],"
	    "   'springs': ["
	    "    {'name': 'Hair', 'colliderGroups': [0], 'joints': ["
	    "     {'node': 5, 'stiffness': 0.8, 'dragForce': 0.3, 'gravityPower': 0.1,"
	    "      'hitRadius': 0.01},"
	    "     {'node': 6, 'stiffness': 0.6, 'dragForce': 0.35, 'gravityPower': 0.2,"
	    "      'hitRadius': 0.02, 'gravityDir': [1, 0, 0]},"
	    "     {'node': 8}]},"
	    "    {'name': 'Skirt', 'colliderGroups': [1],"
	    "     'joints': [{'node': 7, 'stiffness': 2.0}, {'node': 9}]}]}}}",
	    head_q);
	return buf;
}

/* ---- reading results ---- */

/* root at a dotted path: keys, or indices for arrays ("strands.0.anchor.2"). */
static json_t *at(json_t *root, const char *path)
{
	char buf[256], *save = NULL;
	snprintf(buf, sizeof buf, "%s", path);
	for (char *tok = strtok_r(buf, ".", &save); tok && root; tok = strtok_r(NULL, ".", &save))
		root = json_is_array(root) ? json_array_get(root, strtoul(tok, NULL, 10))
		                           : json_object_get(root, tok);
	return root;
}

static void check_num_(json_t *root, const char *path, double want, int line)
{
	json_t *v = at(root, path);
	if (!json_is_number(v)) {
		print_error("line %d: %s is not a number\n", line, path);
		fail();
	}
	if (fabs(json_number_value(v) - want) > 1e-9) {
		print_error("line %d: %s = %.12g, expected %.12g\n", line, path,
		            json_number_value(v), want);
		fail();
	}
}
#define check_num(root, path, want) check_num_(root, path, want, __LINE__)

static void check_vec_(json_t *root, const char *path, double x, double y, double z, int line)
{
	char p[256];
	const double want[3] = {x, y, z};
	if (json_array_size(at(root, path)) != 3) {
		print_error("line %d: %s is not a 3-vector\n", line, path);
		fail();
	}
	for (int i = 0; i < 3; i++) {
		snprintf(p, sizeof p, "%s.%d", path, i);
		check_num_(root, p, want[i], line);
	}
}
#define check_vec(root, path, x, y, z) check_vec_(root, path, x, y, z, __LINE__)

static void check_str_(json_t *root, const char *path, const char *want, int line)
{
	const char *got = json_string_value(at(root, path));
	if (!got || strcmp(got, want) != 0) {
		print_error("line %d: %s = %s, expected \"%s\"\n", line, path, got ? got : "(none)",
		            want);
		fail();
	}
}
#define check_str(root, path, want) check_str_(root, path, want, __LINE__)

/* Some warning (or note, with key "notes") of the report contains needle. */
static int report_says(const vrm_report *r, const char *key, const char *needle)
{
	const json_t *a = json_object_get(r->json, key);
	for (size_t i = 0; i < json_array_size(a); i++)
		if (strstr(json_string_value(json_array_get(a, i)), needle))
			return 1;
	return 0;
}

static void dump_report(const vrm_report *r)
{
	char *s = json_dumps(json_object_get(r->json, "warnings"), JSON_INDENT(1));
	print_error("warnings: %s\n", s);
	free(s);
}

static json_t *import_q(const char *json_q, vrm_report *r)
{
	size_t len;
	char err[512];
	uint8_t *b = make_glb(json_q, 0, &len);
	json_t *inst = vrm_import(b, len, r, err, sizeof err);
	free(b);
	if (!inst) {
		print_error("import failed: %s\n", err);
		fail();
	}
	return inst;
}

/* vrm_import of these bytes fails with a message containing every needle (NULL-ended). */
static void fails_with_bytes(const uint8_t *b, size_t len, const char *needle1, const char *needle2)
{
	char err[512] = "";
	vrm_report r = {0};
	json_t *inst = vrm_import(b, len, &r, err, sizeof err);
	if (inst) {
		json_decref(inst);
		vrm_report_free(&r);
		print_error("import succeeded, expected an error with \"%s\"\n", needle1);
		fail();
	}
	assert_null(r.json);
	if (!strstr(err, needle1) || (needle2 && !strstr(err, needle2))) {
		print_error("error \"%s\" does not name \"%s\" / \"%s\"\n", err, needle1,
		            needle2 ? needle2 : "");
		fail();
	}
}

static void fails_with(const char *json_q, const char *needle1, const char *needle2)
{
	size_t len;
	uint8_t *b = make_glb(json_q, 0, &len);
	fails_with_bytes(b, len, needle1, needle2);
	free(b);
}

/* ---- VRM 1.0 ---- */

#define IDENTITY_Q "[0, 0, 0, 1]"
/* 90° about +Y: x -> -z, z -> x. */
#define YAW90_Q "[0, 0.70710678118654752, 0, 0.70710678118654752]"

static void test_v1_chains_colliders_groups(void **state)
{
	vrm_report r;
	json_t *inst = import_q(v1_avatar(IDENTITY_Q), &r);
	(void)state;
	check_str(inst, "name", "Testy");
	check_str(inst, "solver", "springbone");
	check_str(inst, "springbone.form", "vrm");
	check_str(inst, "springbone.center", "world");
	assert_int_equal(json_array_size(at(inst, "strands")), 2);

	/* Hair: HairRoot is (0, 0.05, -0.1) from the head; joints go straight down. */
	/* the exact rest positions, unequal segments (4 and 6 cm) included */
	check_vec(inst, "strands.0.rest.0", 0, 0.05, -0.1);
	check_vec(inst, "strands.0.rest.1", 0, 0.01, -0.1);
	check_vec(inst, "strands.0.rest.2", 0, -0.05, -0.1);
	assert_int_equal(json_array_size(at(inst, "strands.0.rest")), 3);
	assert_null(at(inst, "strands.0.segment_length"));
	assert_null(at(inst, "strands.0.anchor_bone"));
	/* Joint i's parameters drive segment i; the last joint's are unused (spec). */
	check_num(inst, "strands.0.springbone.stiffness.0", 0.8);
	check_num(inst, "strands.0.springbone.stiffness.1", 0.6);
	check_num(inst, "strands.0.springbone.drag_force.0", 0.3);
	check_num(inst, "strands.0.springbone.drag_force.1", 0.35);
	check_num(inst, "strands.0.springbone.gravity_power.1", 0.2);
	check_num(inst, "strands.0.springbone.hit_radius.0", 0.01);
	check_vec(inst, "strands.0.springbone.gravity_dir.0", 0, -1, 0);
	check_vec(inst, "strands.0.springbone.gravity_dir.1", 1, 0, 0);
	assert_int_equal(json_array_size(at(inst, "strands.0.springbone.stiffness")), 2);
	assert_null(at(inst, "strands.0.springbone.limit"));
	assert_int_equal(json_array_size(at(inst, "strands.0.colliders")), 2);
	assert_int_equal(json_integer_value(at(inst, "strands.0.colliders.0")), 0);
	assert_int_equal(json_integer_value(at(inst, "strands.0.colliders.1")), 1);

	/* Skirt: Skirt0 at hips (0, 1, 0) + (0.1, -0.05, 0) = (0.1, 0.95, 0), head (0, 1.6, 0).
	 * Defaults of the 1.0 schema where the joint says nothing (drag 0.5, hit radius 0). */
	check_vec(inst, "strands.1.rest.0", 0.1, -0.65, 0);
	check_vec(inst, "strands.1.rest.1", 0.1, -0.85, 0);
	check_str(inst, "strands.1.anchor_bone", "Hips");
	check_num(inst, "strands.1.springbone.stiffness.0", 2.0);
	check_num(inst, "strands.1.springbone.drag_force.0", 0.5);
	check_num(inst, "strands.1.springbone.hit_radius.0", 0.0);
	assert_int_equal(json_array_size(at(inst, "strands.1.colliders")), 1);
	assert_int_equal(json_integer_value(at(inst, "strands.1.colliders.0")), 2);

	assert_int_equal(json_array_size(at(inst, "colliders")), 3);
	check_str(inst, "colliders.0.shape", "sphere");
	check_str(inst, "colliders.0.attach", "head");
	check_vec(inst, "colliders.0.center", 0, 0.02, 0);
	check_num(inst, "colliders.0.radius", 0.09);
	check_str(inst, "colliders.1.shape", "capsule");
	check_vec(inst, "colliders.1.a", 0.05, 0, 0);
	check_vec(inst, "colliders.1.b", -0.05, 0, 0);
	check_num(inst, "colliders.1.radius", 0.03);
	/* on the hips, a humanoid bone of its own: hips-local, the hips' rest in "bones" */
	check_str(inst, "colliders.2.attach", "hips");
	check_vec(inst, "colliders.2.center", 0, 0, 0);
	check_vec(inst, "bones.hips.position", 0, -0.6, 0); /* hips (0, 1, 0) from the head */
	check_num(inst, "bones.hips.rotation.0", 0);
	check_num(inst, "bones.hips.rotation.3", 1);
	assert_int_equal(json_object_size(at(inst, "bones")), 1);
	check_str(r.json, "colliders.2.bone", "hips");

	/* The report: lengths per segment, and each approximation named. */
	check_num(r.json, "strands.0.segment_lengths.0", 0.04);
	check_num(r.json, "strands.0.segment_lengths.1", 0.06);
	check_str(r.json, "source.format", "VRM 1.0");
	check_str(r.json, "source.head.name", "Head");
	/* unequal segments are carried exactly: no warning about them */
	if (report_says(&r, "warnings", "unequal segment lengths") ||
	    report_says(&r, "warnings", "\"Hips\"")) { /* chain and collider kept on the bone */
		dump_report(&r);
		fail();
	}
	assert_int_equal(r.warning_count, 0);
	/* springs[1] hangs from a node under the hips: it moves with the hips */
	check_str(inst, "strands.1.bone", "hips");
	check_str(r.json, "strands.1.moves_with", "hips");
	check_str(r.json, "strands.0.moves_with", "head");
	assert_null(at(inst, "strands.0.bone"));
	json_decref(inst);
	vrm_report_free(&r);
}

/* The head turned 90° about Y at rest: what hangs from the head keeps its head-local
 * numbers; the rest turns by -90° (x, y, z) -> (-z, y, x); so do world directions. */
static void test_v1_head_rotation(void **state)
{
	vrm_report r;
	json_t *inst = import_q(v1_avatar(YAW90_Q), &r);
	(void)state;
	check_vec(inst, "strands.0.rest.0", 0, 0.05, -0.1);
	check_vec(inst, "strands.0.rest.1", 0, 0.01, -0.1);
	check_vec(inst, "strands.0.rest.2", 0, -0.05, -0.1);
	check_vec(inst, "strands.0.springbone.gravity_dir.0", 0, -1, 0);
	check_vec(inst, "strands.0.springbone.gravity_dir.1", 0, 0, 1); /* world +X */
	check_vec(inst, "strands.1.rest.0", 0, -0.65, 0.1);             /* (0.1, -0.65, 0) */
	check_vec(inst, "colliders.0.center", 0, 0.02, 0);
	check_vec(inst, "colliders.1.a", 0.05, 0, 0);
	check_vec(inst, "colliders.2.center", 0, 0, 0);
	check_vec(inst, "bones.hips.position", 0, -0.6, 0);
	check_num(r.json, "source.head.rest_rotation_deg", 90);
	assert_true(report_says(&r, "notes", "rest rotation is not the identity"));
	json_decref(inst);
	vrm_report_free(&r);
}

/* Extended colliders replace their fallback shape; the draft limits become per-joint
 * limits; a spherical limit is reported. */
static void test_v1_extended_colliders_and_limits(void **state)
{
	const char *json =
	    "{'asset': {'version': '2.0'}, 'nodes': ["
	    "  {'name': 'Head', 'translation': [0, 1.5, 0], 'children': [1, 5]},"
	    "  {'name': 'H0', 'translation': [0, 0, -0.1], 'children': [2]},"
	    "  {'name': 'H1', 'translation': [0, -0.05, 0], 'children': [3]},"
	    "  {'name': 'H2', 'translation': [0, -0.05, 0], 'children': [4]},"
	    "  {'name': 'H3', 'translation': [0, -0.05, 0]},"
	    "  {'name': 'Scaled', 'translation': [0.1, 0, 0], 'scale': [2, 2, 2]}],"
	    " 'extensions': {"
	    "  'VRMC_vrm': {'humanoid': {'humanBones': {'head': {'node': 0}}}},"
	    "  'VRMC_springBone': {'specVersion': '1.0', 'colliders': ["
	    "   {'node': 0, 'shape': {'sphere': {'offset': [0, 1000, 0], 'radius': 1000}},"
	    "    'extensions': {'VRMC_springBone_extended_collider': {'specVersion': '1.0',"
	    "     'shape': {'plane': {'offset': [0, -0.1, 0], 'normal': [0, 2, 0]}}}}},"
	    "   {'node': 0, 'shape': {'sphere': {'offset': [0, -10000, 0], 'radius': 0}},"
	    "    'extensions': {'VRMC_springBone_extended_collider': {'specVersion': '1.0',"
	    "     'shape': {'sphere': {'offset': [0, 0, 0.05], 'radius': 0.3, 'inside': true}}}}},"
	    "   {'node': 0, 'shape': {'sphere': {'offset': [0, -10000, 0], 'radius': 0}},"
	    "    'extensions': {'VRMC_springBone_extended_collider': {'specVersion': '1.0',"
	    "     'shape': {'capsule': {'offset': [0, 0, 0], 'tail': [0, -0.2, 0], 'radius': 0.4,"
	    "      'inside': true}}}}},"
	    "   {'node': 5, 'shape': {'sphere': {'offset': [0, 0.01, 0], 'radius': 0.05}}}],"
	    "   'colliderGroups': [{'colliders': [0, 1, 2, 3]}],"
	    "   'springs': [{'colliderGroups': [0], 'center': 0, 'joints': ["
	    "    {'node': 1, 'extensions': {'VRMC_springBone_limit': {'specVersion': '1.0-draft',"
	    "      'limit': {'cone': {'angle': 0.5}}}}},"
	    "    {'node': 2, 'extensions': {'VRMC_springBone_limit': {"
	    "      'limit': {'hinge': {'angle': 1.0, 'rotation': " YAW90_Q "}}}}},"
	    "    {'node': 3, 'extensions': {'VRMC_springBone_limit': {'specVersion': '1.0-draft',"
	    "      'limit': {'spherical': {'pitch': 0.5, 'yaw': 0.5}}}}},"
	    "    {'node': 4}]}]}}}";
	vrm_report r;
	json_t *inst = import_q(json, &r);
	(void)state;
	check_str(inst, "springbone.center", "head");
	check_vec(inst, "strands.0.rest.0", 0, 0, -0.1);
	check_vec(inst, "strands.0.rest.3", 0, -0.15, -0.1);
	assert_int_equal(json_array_size(at(inst, "strands.0.rest")), 4);

	check_str(inst, "colliders.0.shape", "plane");
	check_vec(inst, "colliders.0.point", 0, -0.1, 0);
	check_vec(inst, "colliders.0.normal", 0, 1, 0); /* normalised */
	check_str(inst, "colliders.1.shape", "inside_sphere");
	check_vec(inst, "colliders.1.center", 0, 0, 0.05);
	check_num(inst, "colliders.1.radius", 0.3);
	check_str(inst, "colliders.2.shape", "inside_capsule");
	check_vec(inst, "colliders.2.b", 0, -0.2, 0);
	/* On a node scaled 2x at (0.1, 0, 0): offset and radius scale with it (UniVRM). */
	check_vec(inst, "colliders.3.center", 0.1, 0.02, 0);
	check_num(inst, "colliders.3.radius", 0.1);

	/* Cone: 0.5 rad. Hinge: bone axis -Y, so the frame is 180° about X, then the limit's own
	 * 90° about Y: its +X axis ends on (0, 0, 1) in head space. */
	check_str(inst, "strands.0.springbone.limit.0.type", "cone");
	check_num(inst, "strands.0.springbone.limit.0.angle_deg", 0.5 * 180 / VRM_PI);
	check_str(inst, "strands.0.springbone.limit.1.type", "hinge");
	check_num(inst, "strands.0.springbone.limit.1.angle_deg", 180 / VRM_PI);
	check_vec(inst, "strands.0.springbone.limit.1.axis", 0, 0, 1);
	check_str(inst, "strands.0.springbone.limit.2.type", "none");
	if (!report_says(&r, "warnings", "spherical angle limit") ||
	    !report_says(&r, "warnings", "scale other than 1") ||
	    report_says(&r, "warnings", "rotated away")) {
		dump_report(&r);
		fail();
	}
	json_decref(inst);
	vrm_report_free(&r);
}

/* ---- VRM 0.x ---- */

/* Head at (0, 1.5, 0); hair A -> B -> C with a branch B -> D, and a one-bone ribbon. VRM
 * 0.x faces -Z, so head-local numbers are the glTF ones with x and z negated. */
static const char *const v0_avatar =
    "{'asset': {'version': '2.0'}, 'extensionsUsed': ['VRM'], 'nodes': ["
    "  {'name': 'Root', 'children': [1]},"
    "  {'name': 'Hips', 'translation': [0, 1.0, 0], 'children': [2]},"
    "  {'name': 'Head', 'translation': [0, 0.5, 0], 'children': [3, 7]},"
    "  {'name': 'HairA', 'translation': [0.02, 0.03, 0.1], 'children': [4]},"
    "  {'name': 'HairB', 'translation': [0, -0.05, 0], 'children': [5, 6]},"
    "  {'name': 'HairC', 'translation': [0, -0.05, 0]},"
    "  {'name': 'HairD', 'translation': [0.03, -0.04, 0]},"
    "  {'name': 'Ribbon', 'translation': [0.1, 0.1, 0]}],"
    " 'extensions': {'VRM': {"
    "  'meta': {'title': 'Zero'},"
    "  'humanoid': {'humanBones': [{'bone': 'hips', 'node': 1}, {'bone': 'head', 'node': 2}]},"
    "  'secondaryAnimation': {"
    "   'colliderGroups': [{'node': 2, 'colliders': ["
    "    {'offset': {'x': 0.01, 'y': 0.05, 'z': 0.02}, 'radius': 0.1}]}],"
    "   'boneGroups': ["
    "    {'comment': 'hair', 'stiffiness': 0.7, 'gravityPower': 0.2,"
    "     'gravityDir': {'x': 0, 'y': -1, 'z': 0}, 'dragForce': 0.45, 'center': -1,"
    "     'hitRadius': 0.015, 'bones': [3], 'colliderGroups': [0]},"
    "    {'comment': 'ribbon', 'stiffiness': 1.5, 'gravityPower': 0.1,"
    "     'gravityDir': {'x': 0, 'y': 0, 'z': 1}, 'center': -1,"
    "     'bones': [7], 'colliderGroups': []}]}}}}";

static void test_v0_chains_tails_colliders(void **state)
{
	vrm_report r;
	json_t *inst = import_q(v0_avatar, &r);
	(void)state;
	check_str(inst, "name", "Zero");
	assert_int_equal(json_array_size(at(inst, "strands")), 3);

	/* A -> B -> C, then the 7 cm virtual tail continuing B -> C: lengths .05 .05 .07. */
	check_vec(inst, "strands.0.rest.0", -0.02, 0.03, -0.1);
	check_vec(inst, "strands.0.rest.1", -0.02, -0.02, -0.1);
	check_vec(inst, "strands.0.rest.2", -0.02, -0.07, -0.1);
	check_vec(inst, "strands.0.rest.3", -0.02, -0.14, -0.1);
	assert_int_equal(json_array_size(at(inst, "strands.0.rest")), 4);
	check_num(r.json, "strands.0.segment_lengths.2", 0.07);
	assert_true(json_is_true(at(r.json, "strands.0.virtual_tail")));
	/* The bone group's values on every segment, "stiffiness" (sic) included. */
	for (int i = 0; i < 3; i++) {
		char p[64];
		snprintf(p, sizeof p, "strands.0.springbone.stiffness.%d", i);
		check_num(inst, p, 0.7);
		snprintf(p, sizeof p, "strands.0.springbone.drag_force.%d", i);
		check_num(inst, p, 0.45);
		snprintf(p, sizeof p, "strands.0.springbone.gravity_power.%d", i);
		check_num(inst, p, 0.2);
		snprintf(p, sizeof p, "strands.0.springbone.hit_radius.%d", i);
		check_num(inst, p, 0.015);
		snprintf(p, sizeof p, "strands.0.springbone.gravity_dir.%d", i);
		check_vec(inst, p, 0, -1, 0);
	}
	assert_int_equal(json_integer_value(at(inst, "strands.0.colliders.0")), 0);

	/* The branch B -> D: D = B + (0.03, -0.04, 0), its tail 7 cm on along (0.6, -0.8, 0). */
	check_vec(inst, "strands.1.rest.0", -0.05, -0.06, -0.1);
	check_vec(inst, "strands.1.rest.1", -0.05 - 0.6 * 0.07, -0.06 - 0.8 * 0.07, -0.1);
	assert_int_equal(json_integer_value(at(inst, "strands.1.colliders.0")), 0);

	/* Ribbon: a single bone, its tail along head -> ribbon; defaults drag 0.4, hit 0.02;
	 * gravityDir is Unity's forward (+z), the face's direction: +Z head-local. */
	check_vec(inst, "strands.2.rest.0", -0.1, 0.1, 0);
	check_vec(inst, "strands.2.rest.1", -0.1 - 0.07 * sqrt(0.5), 0.1 + 0.07 * sqrt(0.5), 0);
	assert_int_equal(json_array_size(at(inst, "strands.2.rest")), 2);
	check_num(inst, "strands.2.springbone.stiffness.0", 1.5);
	check_num(inst, "strands.2.springbone.drag_force.0", 0.4);
	check_num(inst, "strands.2.springbone.hit_radius.0", 0.02);
	check_vec(inst, "strands.2.springbone.gravity_dir.0", 0, 0, 1);
	assert_int_equal(json_array_size(at(inst, "strands.2.colliders")), 0);

	/* Collider offset (0.01, 0.05, 0.02) in Unity's frame: glTF z = -0.02, then turned. */
	assert_int_equal(json_array_size(at(inst, "colliders")), 1);
	check_vec(inst, "colliders.0.center", -0.01, 0.05, 0.02);
	check_num(inst, "colliders.0.radius", 0.1);

	check_str(r.json, "source.format", "VRM 0.x");
	/* D hangs below B, which the hair chain rotates: a branch of strand 0 at point 1 */
	check_num(inst, "strands.1.parent.strand", 0);
	check_num(inst, "strands.1.parent.point", 1);
	assert_null(at(inst, "strands.1.bone"));
	check_str(r.json, "strands.1.moves_with", "strand 0 point 1");
	if (report_says(&r, "warnings", "branch off")) {
		dump_report(&r);
		fail();
	}
	json_decref(inst);
	vrm_report_free(&r);
}

/* VRM 0.x body bones: a collider on an unmapped node takes its nearest humanoid ancestor
 * (Chest's child -> chest), 0.x's ThumbIntermediate is 1.0's thumb_proximal, eyes are bones
 * of their own, and a node under no humanoid bone stays on the head with a warning. The
 * bones' rest positions are in the turned head frame (0.x faces -Z). */
static void test_v0_body_bones(void **state)
{
	static const char *const json =
	    "{'asset': {'version': '2.0'}, 'extensionsUsed': ['VRM'], 'nodes': ["
	    "  {'name': 'Root', 'children': [1, 8]},"
	    "  {'name': 'Hips', 'translation': [0, 1.0, 0], 'children': [2]},"
	    "  {'name': 'Chest', 'translation': [0, 0.3, 0.02], 'children': [3, 5, 6]},"
	    "  {'name': 'Head', 'translation': [0, 0.2, 0], 'children': [4, 9]},"
	    "  {'name': 'Hair', 'translation': [0, 0.05, 0.1], 'children': [7]},"
	    "  {'name': 'ChestCol', 'translation': [0.05, 0, 0]},"
	    "  {'name': 'Thumb', 'translation': [0.5, 0, 0]},"
	    "  {'name': 'HairEnd', 'translation': [0, -0.1, 0]},"
	    "  {'name': 'Prop', 'translation': [1, 1, 1]},"
	    "  {'name': 'EyeL', 'translation': [0.03, 0.05, -0.08]}],"
	    " 'extensions': {'VRM': {"
	    "  'humanoid': {'humanBones': [{'bone': 'hips', 'node': 1}, {'bone': 'head', 'node': 3},"
	    "   {'bone': 'chest', 'node': 2}, {'bone': 'leftThumbIntermediate', 'node': 6},"
	    "   {'bone': 'leftEye', 'node': 9}, {'bone': 'nonsense', 'node': 8},"
	    "   {'bone': 'spine', 'node': 99}]},"
	    "  'secondaryAnimation': {"
	    "   'colliderGroups': ["
	    "    {'node': 5, 'colliders': [{'offset': {'x': 0, 'y': 0.01, 'z': 0.02}, 'radius': 0.1}]},"
	    "    {'node': 6, 'colliders': [{'offset': {'x': 0, 'y': 0, 'z': 0}, 'radius': 0.02}]},"
	    "    {'node': 8, 'colliders': [{'offset': {'x': 0, 'y': 0, 'z': 0}, 'radius': 0.05}]},"
	    "    {'node': 9, 'colliders': [{'offset': {'x': 0, 'y': 0, 'z': 0}, 'radius': 0.01}]}],"
	    "   'boneGroups': [{'comment': 'hair', 'bones': [4], 'colliderGroups': [0, 1, 2, 3]}]}}}}";
	vrm_report r;
	json_t *inst = import_q(json, &r);
	(void)state;
	/* ChestCol (0.05, 0, 0) from the chest, offset (0, 0.01, -0.02) glTF: chest-local in the
	 * head's axes, which 0.x turns 180 degrees about Y: (-0.05, 0.01, 0.02) */
	check_str(inst, "colliders.0.attach", "chest");
	check_vec(inst, "colliders.0.center", -0.05, 0.01, 0.02);
	check_vec(inst, "bones.chest.position", 0, -0.2, 0); /* chest (0, 1.3, .02), head (0, 1.5, .02) */
	check_str(inst, "colliders.1.attach", "left_thumb_proximal");
	check_vec(inst, "colliders.1.center", 0, 0, 0);
	check_vec(inst, "bones.left_thumb_proximal.position", -0.5, -0.2, 0);
	check_str(inst, "colliders.2.attach", "head"); /* Prop: under no humanoid bone */
	check_vec(inst, "colliders.2.center", -1, -0.5, -0.98);
	check_str(inst, "colliders.3.attach", "left_eye");
	check_vec(inst, "bones.left_eye.position", -0.03, 0.05, 0.08);
	/* every humanoid body bone of the file: hips, chest, thumb, eye */
	assert_int_equal(json_object_size(at(inst, "bones")), 4);
	/* hips (0, 1, 0) - head (0, 1.5, 0.02) = (0, -0.5, -0.02), turned: (0, -0.5, 0.02) */
	check_vec(inst, "bones.hips.position", 0, -0.5, 0.02);
	if (!report_says(&r, "warnings", "under no humanoid bone") ||
	    !report_says(&r, "warnings", "on \"Prop\"")) {
		dump_report(&r);
		fail();
	}
	/* the import is a definition the daemon takes: bones-attached colliders included */
	pt_instance_def *def = malloc(sizeof *def);
	pt_error e;
	assert_non_null(def);
	assert_int_equal(pt_instance_def_init(def), 1);
	assert_int_equal(pt_schema_parse(inst, def, NULL, &e), 0);
	assert_int_equal(def->colliders[0].attach, PT_ATTACH_BONE);
	assert_int_equal(def->colliders[0].bone, PT_BONE_CHEST);
	pt_instance_def_fini(def);
	free(def);
	assert_int_equal(vrm_humanoid_bone("upperChest", 1), PT_BONE_UPPER_CHEST);
	assert_int_equal(vrm_humanoid_bone("leftThumbMetacarpal", 1), PT_BONE_LEFT_THUMB_METACARPAL);
	assert_int_equal(vrm_humanoid_bone("leftThumbProximal", 1), PT_BONE_LEFT_THUMB_PROXIMAL);
	assert_int_equal(vrm_humanoid_bone("leftThumbProximal", 0), PT_BONE_LEFT_THUMB_METACARPAL);
	assert_int_equal(vrm_humanoid_bone("rightLittleDistal", 0), PT_BONE_RIGHT_LITTLE_DISTAL);
	assert_int_equal(vrm_humanoid_bone("head", 1), -1);
	assert_int_equal(vrm_humanoid_bone("left_upper_arm", 1), -1); /* not a VRM spelling */
	json_decref(inst);
	vrm_report_free(&r);
}

/* ---- limits of an instance ---- */

/* 2 chains on the hips, then HC (three past the strand limit) on the head, one of 70
 * joints; NCOL colliders (eight past the collider limit) all used by the first head
 * chain. Nodes: 0 hips, 1 head, 2..5 the hip chains, 6.. the head chain roots, then
 * chain 0's 69 further joints, then the second joints of chains 1.. */
enum { HC = VRM_MAX_STRANDS + 3, NCOL = VRM_MAX_COLLIDERS + 8, LONG0 = 6 + HC };
static char *big_avatar(void)
{
	size_t cap = 1 << 20, n = 0;
	char *s = malloc(cap);
	int node = 0;
#define EMIT(...) (n += (size_t)snprintf(s + n, cap - n, __VA_ARGS__))
	EMIT("{'asset': {'version': '2.0'}, 'nodes': [");
	EMIT("{'name': 'Hips', 'translation': [0, 1, 0], 'children': [1");
	for (int i = 0; i < 2; i++)
		EMIT(", %d", 2 + 2 * i);
	EMIT("]}, {'name': 'Head', 'translation': [0, 0.6, 0], 'children': [");
	for (int i = 0; i < HC; i++)
		EMIT("%s%d", i ? ", " : "", 6 + i);
	EMIT("]}");
	node = 2;
	for (int i = 0; i < 2; i++, node += 2) /* hip chains: nodes 2..5 */
		EMIT(", {'translation': [0.1, 0, 0], 'children': [%d]}, {'translation': [0, -0.1, "
		     "0]}",
		     node + 1);
	/* head chain roots; chain 0 continues through LONG0.. for 69 more joints */
	for (int i = 0; i < HC; i++)
		EMIT(", {'name': 'C%d', 'translation': [0, 0, -0.1], 'children': [%d]}", i,
		     i == 0 ? LONG0 : LONG0 + 69 + i - 1);
	for (int k = 0; k < 69; k++)
		EMIT(", {'translation': [0, -0.01, 0]%s}", k < 68 ? ", 'children': [X]" : "");
	for (int i = 1; i < HC; i++) /* second joints of chains 1.. */
		EMIT(", {'translation': [0, -0.02, 0]}");
	EMIT("], 'extensions': {'VRMC_vrm': {'humanoid': {'humanBones': {'head': {'node': 1}}}},"
	     " 'VRMC_springBone': {'colliders': [");
	for (int i = 0; i < NCOL; i++)
		EMIT("%s{'node': 1, 'shape': {'sphere': {'offset': [0, %d, 0], 'radius': 0.1}}}",
		     i ? ", " : "", i);
	EMIT("], 'colliderGroups': [{'colliders': [");
	for (int i = 0; i < NCOL; i++)
		EMIT("%s%d", i ? ", " : "", i);
	EMIT("]}], 'springs': [");
	for (int i = 0; i < 2; i++)
		EMIT("{'joints': [{'node': %d}, {'node': %d}]}, ", 2 + 2 * i, 3 + 2 * i);
	EMIT("{'colliderGroups': [0], 'joints': [{'node': 6}");
	for (int k = 0; k < 69; k++)
		EMIT(", {'node': %d}", LONG0 + k);
	EMIT("]}");
	for (int i = 1; i < HC; i++)
		EMIT(", {'joints': [{'node': %d}, {'node': %d}]}", 6 + i, LONG0 + 69 + i - 1);
	EMIT("]}}}");
#undef EMIT
	/* Fill in the chain links: node LONG0 + k has child LONG0 + 1 + k. */
	int k = 0;
	for (char *p = strstr(s, "[X]"); p; p = strstr(p, "[X]"), k++) {
		char num[16];
		snprintf(num, sizeof num, "%d", LONG0 + 1 + k);
		memmove(p + 1 + strlen(num), p + 2, strlen(p + 2) + 1);
		memcpy(p + 1, num, strlen(num));
	}
	return s;
}

static void test_limits_truncate_and_report(void **state)
{
	char *json = big_avatar();
	vrm_report r;
	json_t *inst = import_q(json, &r);
	(void)state;
	free(json);
	assert_int_equal(json_array_size(at(inst, "strands")), VRM_MAX_STRANDS);
	assert_int_equal(json_array_size(at(inst, "colliders")), VRM_MAX_COLLIDERS);
	/* The head chains come first: both hip chains are the ones dropped. */
	for (int i = 0; i < VRM_MAX_STRANDS; i++) {
		char p[64];
		snprintf(p, sizeof p, "strands.%d.anchor_bone", i);
		assert_null(at(inst, p));
	}
	assert_int_equal(json_array_size(at(inst, "strands.0.rest")), VRM_MAX_POINTS);
	assert_int_equal(json_array_size(at(inst, "strands.0.colliders")), VRM_MAX_COLLIDERS);
	check_vec(inst, "colliders.127.center", 0, 127, 0);
	assert_true(json_is_null(at(r.json, "strands.0.strand")));
	check_str(r.json, "strands.0.dropped", "over the 256-strand limit");
	if (!report_says(&r, "warnings", "70 joints") ||
	    !report_says(&r, "warnings", "limits of an instance (256 strands, 4096 points)") ||
	    !report_says(&r, "warnings", "128-collider limit")) {
		dump_report(&r);
		fail();
	}
	json_decref(inst);
	vrm_report_free(&r);
}

/* vrm_import_max below core's cap (what a host that takes fewer strands passes; the daemon
 * passes core's 256): the same file gives 32 strands, the hip chains and the head chains
 * past 32 dropped, each saying so. */
static void test_limits_of_the_daemon(void **state)
{
	(void)state;
	char *json = big_avatar(), err[512];
	size_t len;
	uint8_t *b = make_glb(json, 0, &len);
	free(json);
	vrm_report r = {0};
	json_t *inst = vrm_import_max(b, len, 32, &r, err, sizeof err);
	free(b);
	assert_non_null(inst);
	assert_int_equal(json_array_size(at(inst, "strands")), 32);
	check_str(r.json, "strands.0.dropped", "over the 32-strand limit");
	if (!report_says(&r, "warnings", "limits of an instance (32 strands, 4096 points)")) {
		dump_report(&r);
		fail();
	}
	json_decref(inst);
	vrm_report_free(&r);
}

/* ---- malformed files ---- */

static void test_container_errors(void **state)
{
	size_t len;
	uint8_t *b = make_glb(v1_avatar(IDENTITY_Q), 0, &len);
	uint8_t *m = malloc(len + 16);
	(void)state;

	fails_with_bytes(b, 5, "truncated header", "5 bytes");
	memcpy(m, b, len);
	m[3] = 'X';
	fails_with_bytes(m, len, "bad magic", "byte 0");
	memcpy(m, b, len);
	put32(m + 4, 1);
	fails_with_bytes(m, len, "version 1", "byte 4");
	memcpy(m, b, len);
	put32(m + 12, (uint32_t)len); /* JSON chunk longer than the file */
	fails_with_bytes(m, len, "beyond the end", "byte 12");
	fails_with_bytes(b, len - 1, "truncated file", "byte 8");
	memcpy(m, b, len);
	memset(m + len, 0, 4);
	put32(m + 8, (uint32_t)len + 4); /* 4 bytes where a chunk header needs 8 */
	fails_with_bytes(m, len + 4, "truncated chunk header", NULL);
	memcpy(m, b, len);
	put32(m + 16, 0x004E4942); /* first chunk is BIN */
	fails_with_bytes(m, len, "expected JSON", NULL);
	/* Every prefix of a valid file is refused cleanly. */
	for (size_t n = 0; n < len; n++) {
		char err[512];
		vrm_report r;
		json_t *inst = vrm_import(b, n, &r, err, sizeof err);
		assert_null(inst);
		assert_true(err[0] != '\0');
	}
	free(m);
	free(b);
}

/* Flipped bytes anywhere must give an import or an error, never a crash (run the tests with
 * SANITIZE=1 to have every read checked). */
static void test_mutations_never_crash(void **state)
{
	size_t len;
	uint8_t *b = make_glb(v1_avatar(YAW90_Q), 0, &len);
	uint8_t *m = malloc(len);
	uint32_t seed = 12345;
	(void)state;
	for (int round = 0; round < 3000; round++) {
		memcpy(m, b, len);
		for (int k = 0; k < 1 + round % 4; k++) {
			seed = seed * 1664525u + 1013904223u;
			size_t at_ = (seed >> 8) % len;
			seed = seed * 1664525u + 1013904223u;
			m[at_] = (uint8_t)(seed >> 24);
		}
		char err[512];
		vrm_report r;
		json_t *inst = vrm_import(m, len, &r, err, sizeof err);
		json_decref(inst);
		vrm_report_free(&r);
	}
	free(m);
	free(b);
}

static void test_document_errors(void **state)
{
	char *bad;
	(void)state;
	fails_with("{'asset': {'version': '2.0'}, 'nodes': [", "syntax error", "(line 1, column");
	fails_with("[1, 2]", "not a JSON object", NULL);
	fails_with("{'asset': {'version': '2.0'}, 'nodes': [{}]}", "not a VRM", NULL);

	/* missing head bone, both versions */
	bad = subst(v1_avatar(IDENTITY_Q), "'head': {'node': 4}", "'neck': {'node': 4}");
	fails_with(bad, "missing head bone", "humanBones.head");
	free(bad);
	bad = subst(v0_avatar, "'bone': 'head'", "'bone': 'neck'");
	fails_with(bad, "missing head bone", "extensions.VRM.humanoid");
	free(bad);

	/* out-of-range indices, each named by its path */
	bad = subst(v1_avatar(IDENTITY_Q), "{'node': 5, 'stiffness'",
	            "{'node': 9999999, 'stiffness'");
	fails_with(bad, "springs[0].joints[0].node", "out of range");
	free(bad);
	bad = subst(v1_avatar(IDENTITY_Q), "'children': [9]", "'children': [10]");
	fails_with(bad, "nodes[7].children[0]", "node index 10 out of range");
	free(bad);
	bad = subst(v1_avatar(IDENTITY_Q), "{'colliders': [2]}", "{'colliders': [3]}");
	fails_with(bad, "colliderGroups[1].colliders[0]", "collider index 3 out of range");
	free(bad);
	fails_with("{'nodes': [{'mesh': 0}], 'meshes': [{'primitives': [{'attributes': "
	           "{'POSITION': 0}}]}], 'accessors': [{'bufferView': 0}], "
	           "'extensions': {'VRM': {}}}",
	           "accessors[0].bufferView", "out of range");
	fails_with("{'nodes': [{'mesh': 0}], 'extensions': {'VRM': {}}}", "nodes[0].mesh",
	           "out of range");
	fails_with(
	    "{'nodes': [{'skin': 0}], 'skins': [{'joints': [3]}], 'extensions': {'VRM': {}}}",
	    "skins[0].joints[0]", "node index 3 out of range");
	fails_with("{'nodes': [{'mesh': 0}], 'meshes': [{'primitives': [{'attributes': "
	           "{'POSITION': 0}}]}], 'accessors': [{'bufferView': 0}], 'bufferViews': "
	           "[{'buffer': 0, 'byteLength': 12}], 'buffers': [{'byteLength': 64}], "
	           "'extensions': {'VRM': {}}}",
	           "bufferViews[0]: bytes 0..12 lie outside buffer 0", "chunk (0 bytes");

	/* the node graph */
	fails_with("{'nodes': [{'children': [1]}, {'children': [0]}], 'extensions': {'VRM': {}}}",
	           "cycle", "node");
	fails_with("{'nodes': [{'children': [0]}], 'extensions': {'VRM': {}}}", "itself", "cycle");
	fails_with(
	    "{'nodes': [{'children': [2]}, {'children': [2]}, {}], 'extensions': {'VRM': {}}}",
	    "nodes[1].children[0]", "already has parent 0");
	fails_with("{'nodes': [{'rotation': [0, 0, 0, 0]}], 'extensions': {'VRM': {}}}",
	           "nodes[0].rotation", "zero quaternion");
	fails_with("{'nodes': [{'translation': [1, 2]}], 'extensions': {'VRM': {}}}",
	           "nodes[0].translation", "3 numbers");

	/* a wrong type where the spec has a number */
	bad = subst(v1_avatar(IDENTITY_Q), "'stiffness': 0.8", "'stiffness': '8'");
	fails_with(bad, "springs[0].joints[0].stiffness", "expected a number");
	free(bad);
	/* no springs at all */
	fails_with("{'nodes': [{}], 'extensions': {'VRMC_vrm': {'humanoid': {'humanBones': "
	           "{'head': {'node': 0}}}}, 'VRMC_springBone': {'springs': []}}}",
	           "no spring-bone chains", NULL);
}

/* ---- buffers: a GLB's buffer 0 is its BIN chunk; what is read is checked when read ---- */

/* v1_avatar with `top` (top-level members, each followed by ", ") first and `refs`
 * (", 'mesh': 0", ...) added to its Root node. */
static char *avatar_with(const char *top, const char *refs)
{
	char root[256];
	snprintf(root, sizeof root, "{'name': 'Root', 'children': [1]%s}", refs);
	char *a = subst(v1_avatar(IDENTITY_Q), "{'name': 'Root', 'children': [1]}", root);
	char *r = malloc(strlen(a) + strlen(top) + 1);
	sprintf(r, "{%s%s", top, a + 1);
	free(a);
	return r;
}

/* A mesh (4 positions, accessor 0) and a skin (one inverse bind matrix, accessor 1) for
 * avatar_with's top; VIEWS and BUFFERS follow. */
#define MESH_SKIN                                                                                  \
	"'meshes': [{'primitives': [{'attributes': {'POSITION': 0}}]}],"                           \
	" 'skins': [{'inverseBindMatrices': 1, 'joints': [1]}],"                                   \
	" 'accessors': [{'bufferView': 0, 'componentType': 5126, 'count': 4, 'type': 'VEC3'},"     \
	"  {'bufferView': 1, 'componentType': 5126, 'count': 1, 'type': 'MAT4'}], "
#define ROOT_REFS ", 'mesh': 0, 'skin': 0"

static json_t *import_glb(const char *json_q, size_t bin_len, vrm_report *r)
{
	size_t len;
	char err[512];
	uint8_t *b = make_glb(json_q, bin_len, &len);
	json_t *inst = vrm_import(b, len, r, err, sizeof err);
	free(b);
	if (!inst) {
		print_error("import failed: %s\n", err);
		fail();
	}
	return inst;
}

static int plain_warnings(void)
{
	vrm_report r;
	json_t *inst = import_q(v1_avatar(IDENTITY_Q), &r);
	int n = r.warning_count;
	json_decref(inst);
	vrm_report_free(&r);
	return n;
}

/* Views inside the declared length of buffer 0 and the BIN chunk: no warning. */
static void test_bin_chunk(void **state)
{
	vrm_report r;
	(void)state;
	char *json = avatar_with(MESH_SKIN "'bufferViews': [{'buffer': 0, 'byteLength': 48},"
	                                   " {'buffer': 0, 'byteOffset': 48, 'byteLength': 64}],"
	                                   " 'buffers': [{'byteLength': 112}], ",
	                         ROOT_REFS);
	json_t *inst = import_glb(json, 112, &r);
	assert_int_equal(r.warning_count, plain_warnings());
	assert_false(report_says(&r, "warnings", "buffer 0"));
	json_decref(inst);
	vrm_report_free(&r);
	free(json);
}

/* Buffer 0 declares fewer bytes than the BIN chunk holds and views the import reads lie
 * past the declared length, inside the chunk (the skin matrices of a real VRM 1.0 file):
 * read from the chunk, as three.js does, with one warning. */
static void test_view_past_declared_length_warns(void **state)
{
	vrm_report r;
	(void)state;
	char *json = avatar_with(MESH_SKIN "'bufferViews': [{'buffer': 0, 'byteLength': 48},"
	                                   " {'buffer': 0, 'byteOffset': 96, 'byteLength': 64}],"
	                                   " 'buffers': [{'byteLength': 96}], ",
	                         ROOT_REFS);
	json_t *inst = import_glb(json, 192, &r);
	assert_int_equal(r.warning_count, plain_warnings() + 1);
	if (!report_says(&r, "warnings",
	                 "buffer 0 declares 96 bytes but the GLB's BIN chunk holds 192: 1 buffer "
	                 "view past the declared length is read from the chunk") ||
	    !report_says(&r, "warnings", "(bufferViews[1], bytes 96..160)")) {
		dump_report(&r);
		fail();
	}
	check_vec(inst, "strands.0.rest.0", 0, 0.05, -0.1); /* the import itself unchanged */
	json_decref(inst);
	vrm_report_free(&r);
	free(json);

	/* both views past it (the second reached twice: counted once) */
	json = avatar_with(MESH_SKIN "'bufferViews': [{'buffer': 0, 'byteOffset': 40, "
	                             "'byteLength': 48}, {'buffer': 0, 'byteOffset': 96, "
	                             "'byteLength': 64}], 'buffers': [{'byteLength': 64}], ",
	                   ROOT_REFS);
	char *twice = subst(json, "'POSITION': 0}", "'POSITION': 0, 'JOINTS_0': 1}");
	inst = import_glb(twice, 160, &r);
	if (!report_says(&r, "warnings", "2 buffer views past the declared length are read") ||
	    !report_says(&r, "warnings", "(first: bufferViews[0], bytes 40..88)")) {
		dump_report(&r);
		fail();
	}
	json_decref(inst);
	vrm_report_free(&r);
	free(twice);
	free(json);
}

/* Nothing the import does not read can reject the file: a view entirely outside the
 * chunk, a view of a buffer that does not exist, a view that is not an object, an
 * accessor of a view that does not exist, a mesh and a skin no node uses (with accessor
 * indices out of range), a buffer with a negative length. No warning either. */
static void test_unread_views_cannot_reject(void **state)
{
	vrm_report r;
	(void)state;
	char *json =
	    avatar_with("'meshes': [{'primitives': [{'attributes': {'POSITION': 55}}]}],"
	                " 'skins': [{'inverseBindMatrices': 42, 'joints': [99]}],"
	                " 'accessors': [{'bufferView': 99}, {'bufferView': 0}, {'bufferView': 1},"
	                "  {'bufferView': 2}],"
	                " 'bufferViews': [{'buffer': 0, 'byteOffset': 1000, 'byteLength': 64},"
	                "  {'buffer': 7, 'byteLength': 4}, 'not a view'],"
	                " 'buffers': [{'byteLength': 8}, {'byteLength': -1}], ",
	                "");
	json_t *inst = import_glb(json, 8, &r);
	assert_int_equal(r.warning_count, plain_warnings());
	json_decref(inst);
	vrm_report_free(&r);
	free(json);
}

/* A view the import reads that lies outside the BIN chunk is an error naming the view and
 * the bounds; so are the other faults of what is read. */
static void test_read_view_outside_chunk_rejects(void **state)
{
	size_t len;
	uint8_t *b;
	(void)state;
	/* the mesh's positions run past the chunk's end */
	char *json = avatar_with(MESH_SKIN "'bufferViews': [{'buffer': 0, 'byteOffset': 160,"
	                                   " 'byteLength': 48}, {'buffer': 0, 'byteLength': 64}],"
	                                   " 'buffers': [{'byteLength': 192}], ",
	                         ROOT_REFS);
	b = make_glb(json, 192, &len);
	fails_with_bytes(b, len, "bufferViews[0]: bytes 160..208 lie outside buffer 0",
	                 "the GLB's BIN chunk (192 bytes; buffer 0 declares 192)");
	free(b);
	free(json);

	/* buffer 0 declares more than the chunk holds: the chunk bounds the skin's matrices */
	json = avatar_with(MESH_SKIN "'bufferViews': [{'buffer': 0, 'byteLength': 48},"
	                             " {'buffer': 0, 'byteOffset': 96, 'byteLength': 64}],"
	                             " 'buffers': [{'byteLength': 400}], ",
	                   ROOT_REFS);
	b = make_glb(json, 128, &len);
	fails_with_bytes(b, len, "bufferViews[1]: bytes 96..160 lie outside buffer 0",
	                 "(128 bytes; buffer 0 declares 400)");
	free(b);
	/* ... and with no BIN chunk at all */
	b = make_glb(json, 0, &len);
	fails_with_bytes(b, len, "bufferViews[0]: bytes 0..48 lie outside buffer 0", "(0 bytes");
	free(b);
	free(json);

	/* a buffer with a uri (not read here) bounds its views by its declared length */
	json = avatar_with(MESH_SKIN "'bufferViews': [{'buffer': 0, 'byteLength': 48},"
	                             " {'buffer': 1, 'byteOffset': 8, 'byteLength': 64}],"
	                             " 'buffers': [{'byteLength': 48}, {'byteLength': 64, "
	                             "'uri': 'skin.bin'}], ",
	                   ROOT_REFS);
	b = make_glb(json, 48, &len);
	fails_with_bytes(b, len, "bufferViews[1]: bytes 8..72 lie outside buffer 1", "(64 bytes)");
	free(b);
	free(json);
	/* only buffer 0 can be the BIN chunk */
	json = avatar_with(MESH_SKIN "'bufferViews': [{'buffer': 0, 'byteLength': 48},"
	                             " {'buffer': 1, 'byteLength': 64}],"
	                             " 'buffers': [{'byteLength': 48}, {'byteLength': 64}], ",
	                   ROOT_REFS);
	b = make_glb(json, 112, &len);
	fails_with_bytes(b, len, "bufferViews[1]: buffer 1 has no uri", "only buffer 0");
	free(b);
	free(json);

	/* an index a read mesh holds out of range, named by its path */
	json = avatar_with("'meshes': [{'primitives': [{'attributes': {'POSITION': 0},"
	                   " 'targets': [{'POSITION': 9}]}]}], 'accessors': [{}], ",
	                   ", 'mesh': 0");
	b = make_glb(json, 0, &len);
	fails_with_bytes(b, len, "meshes[0].primitives[0].targets[0].POSITION",
	                 "accessor index 9 out of range");
	free(b);
	free(json);
	/* a read view that is not an object */
	json = avatar_with("'meshes': [{'primitives': [{'attributes': {'POSITION': 0}}]}],"
	                   " 'accessors': [{'bufferView': 0}], 'bufferViews': [7], ",
	                   ", 'mesh': 0");
	b = make_glb(json, 0, &len);
	fails_with_bytes(b, len, "bufferViews[0]: expected an object", NULL);
	free(b);
	free(json);
}

/* The command prints the warning on stderr, as it does the import's others. */
static void test_command_warns_past_declared_length(void **state);

/* ---- the command ---- */

typedef struct run_result {
	int rc;
	char out[65536], err[8192];
} run_result;

static void slurp(FILE *f, char *buf, size_t cap)
{
	size_t n;
	rewind(f);
	n = fread(buf, 1, cap - 1, f);
	buf[n] = '\0';
	fclose(f);
}

/* Runs cmd_import_vrm with stdout and stderr captured. */
static void run(run_result *res, int argc, char **argv)
{
	FILE *fo = tmpfile(), *fe = tmpfile();
	int so, se;
	assert_non_null(fo);
	assert_non_null(fe);
	fflush(stdout);
	fflush(stderr);
	so = dup(1);
	se = dup(2);
	dup2(fileno(fo), 1);
	dup2(fileno(fe), 2);
	res->rc = cmd_import_vrm(argc, argv);
	fflush(stdout);
	fflush(stderr);
	dup2(so, 1);
	dup2(se, 2);
	close(so);
	close(se);
	slurp(fo, res->out, sizeof res->out);
	slurp(fe, res->err, sizeof res->err);
}

static void write_file(const char *path, const uint8_t *b, size_t len)
{
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(b, 1, len, f), len);
	fclose(f);
}

static void test_command(void **state)
{
	static run_result res;
	char dir[] = "/tmp/pt_vrm_XXXXXX", good[64], bad[64], rep[64];
	size_t len;
	uint8_t *b = make_glb(v1_avatar(IDENTITY_Q), 0, &len);
	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(good, sizeof good, "%s/a.vrm", dir);
	snprintf(bad, sizeof bad, "%s/b.vrm", dir);
	snprintf(rep, sizeof rep, "%s/r.json", dir);
	write_file(good, b, len);
	b[0] = 'X';
	write_file(bad, b, len);
	free(b);

	char *help[] = {"import-vrm", "--help"};
	run(&res, 2, help);
	assert_int_equal(res.rc, 0);
	assert_non_null(strstr(res.out, "usage: ponytail import-vrm"));

	char *none[] = {"import-vrm"};
	run(&res, 1, none);
	assert_int_equal(res.rc, 2);
	assert_non_null(strstr(res.err, "missing the avatar file"));
	char *unknown[] = {"import-vrm", "--frobnicate", good};
	run(&res, 3, unknown);
	assert_int_equal(res.rc, 2);
	assert_non_null(strstr(res.err, "unknown option '--frobnicate'"));
	char *two[] = {"import-vrm", good, good};
	run(&res, 3, two);
	assert_int_equal(res.rc, 2);
	char *prewarm_bad[] = {"import-vrm", "--prewarm", "11", good};
	run(&res, 4, prewarm_bad);
	assert_int_equal(res.rc, 2);

	char *missing[] = {"import-vrm", "/nonexistent/avatar.vrm"};
	run(&res, 2, missing);
	assert_int_equal(res.rc, 1);
	assert_non_null(strstr(res.err, "cannot open"));
	char *malformed[] = {"import-vrm", bad};
	run(&res, 2, malformed);
	assert_int_equal(res.rc, 1);
	assert_non_null(strstr(res.err, "bad magic"));
	assert_string_equal(res.out, "");

	char report_opt[80];
	snprintf(report_opt, sizeof report_opt, "--report=%s", rep);
	char *ok[] = {"import-vrm", "--name", "alice", "--prewarm=0.5", report_opt, good};
	run(&res, 6, ok);
	assert_int_equal(res.rc, 0);
	json_t *inst = json_loads(res.out, 0, NULL);
	assert_non_null(inst);
	check_str(inst, "name", "alice");
	check_num(inst, "prewarm_s", 0.5);
	check_vec(inst, "strands.1.rest.0", 0.1, -0.65, 0);
	json_decref(inst);
	assert_null(strstr(res.err, "unequal segment lengths"));
	assert_null(strstr(res.err, "warning: ")); /* the chain on the hips moves with them */
	json_t *report = json_load_file(rep, 0, NULL);
	assert_non_null(report);
	assert_int_equal(json_array_size(at(report, "warnings")), 0);
	json_decref(report);

	char *rep_only[] = {"import-vrm", "--report", good};
	run(&res, 3, rep_only);
	assert_int_equal(res.rc, 0);
	report = json_loads(res.out, 0, NULL);
	assert_non_null(report);
	check_str(report, "source.format", "VRM 1.0");
	json_decref(report);

	unlink(good);
	unlink(bad);
	unlink(rep);
	rmdir(dir);
}

static void test_command_warns_past_declared_length(void **state)
{
	static run_result res;
	char dir[] = "/tmp/pt_vrm_XXXXXX", path[64];
	size_t len;
	(void)state;
	char *json = avatar_with(MESH_SKIN "'bufferViews': [{'buffer': 0, 'byteLength': 48},"
	                                   " {'buffer': 0, 'byteOffset': 96, 'byteLength': 64}],"
	                                   " 'buffers': [{'byteLength': 96}], ",
	                         ROOT_REFS);
	uint8_t *b = make_glb(json, 192, &len);
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof path, "%s/a.vrm", dir);
	write_file(path, b, len);
	char *argv[] = {"import-vrm", path};
	run(&res, 2, argv);
	assert_int_equal(res.rc, 0);
	if (!strstr(res.err, "ponytail import-vrm: warning: buffer 0 declares 96 bytes but the "
	                     "GLB's BIN chunk holds 192")) {
		print_error("stderr: %s\n", res.err);
		fail();
	}
	json_t *inst = json_loads(res.out, 0, NULL);
	assert_non_null(inst);
	json_decref(inst);
	unlink(path);
	rmdir(dir);
	free(b);
	free(json);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_v1_chains_colliders_groups),
	    cmocka_unit_test(test_v1_head_rotation),
	    cmocka_unit_test(test_v1_extended_colliders_and_limits),
	    cmocka_unit_test(test_v0_body_bones),
	    cmocka_unit_test(test_v0_chains_tails_colliders),
	    cmocka_unit_test(test_limits_of_the_daemon),
	    cmocka_unit_test(test_limits_truncate_and_report),
	    cmocka_unit_test(test_container_errors),
	    cmocka_unit_test(test_mutations_never_crash),
	    cmocka_unit_test(test_document_errors),
	    cmocka_unit_test(test_bin_chunk),
	    cmocka_unit_test(test_view_past_declared_length_warns),
	    cmocka_unit_test(test_unread_views_cannot_reject),
	    cmocka_unit_test(test_read_view_outside_chunk_rejects),
	    cmocka_unit_test(test_command),
	    cmocka_unit_test(test_command_warns_past_declared_length),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
