/* `ponytail sim` inputs: the instance file (a plain instance definition, or a bake file
 * with "instance" and optionally "poses", "tick_hz", "substeps", like the fixtures in
 * tests/fixtures/vrm/) and head poses (a pose file, a bake file's poses, or a built-in
 * motion). Errors are printed to stderr as "ponytail sim: FILE: ..." and reported as -1. */
#ifndef PONYTAIL_CLI_SIM_INPUT_H
#define PONYTAIL_CLI_SIM_INPUT_H

#include <stddef.h>

#include <jansson.h>

#include "ponytail/instance.h"
#include "ponytail/motion.h"
#include "ponytail/types.h"

/* Body-bone poses per line: every body bone once, as in a head_pose message. */
enum { SIM_MAX_BONES = PT_BONE_COUNT };

typedef struct sim_pose {
	double t; /* seconds */
	pt_pose pose;
	int moving;      /* the line gave "v" and/or "w": the head is extrapolated from it */
	pt_vec3 v, w;    /* m/s world; rad/s world axes (zero when not given) */
	int nbones;      /* "bones": {"chest": {"p": [..], "q": [..]}, ...}: body-bone poses, */
	size_t bone_at;  /* [0, SIM_MAX_BONES], at sim_poses' bone[bone_at..] */
} sim_pose;

/* A head trajectory: a list of timed poses (held between and after them), or a motion. */
typedef struct sim_poses {
	sim_pose *v; /* owned; sorted by t */
	size_t n, cap;
	pt_bone *bone;      /* owned: every line's bones, in line order (a line pays only */
	pt_pose *bone_pose; /* for the bones it gives); world, q unit */
	size_t nbone, bone_cap;
	int use_motion;
	pt_motion motion;
	size_t cursor; /* lookup position: sim_poses_at is called with rising t */
} sim_poses;

/* What an instance file holds besides the definition. */
typedef struct sim_instance_file {
	json_t *poses;  /* a bake file's "poses" array (new reference), or NULL */
	double tick_hz; /* a bake file's "tick_hz", 0 when absent */
	int substeps;   /* a bake file's "substeps", 0 when absent */
} sim_instance_file;

/* Reads `path` into *def (validated; an initialised definition the caller owns and
 * finishes). *extra receives the bake fields (release with sim_instance_file_free). */
int sim_load_instance(const char *path, pt_instance_def *def, sim_instance_file *extra);
void sim_instance_file_free(sim_instance_file *f);

/* Reads a pose file: JSON lines {"t", "p", "q"} ("tick" instead of "t" means
 * t = tick / tick_hz; optional "v", "w" and "bones", the world poses of body bones as in
 * PUT /v1/instances/{id}/pose), or one JSON document with a "poses" array of such objects.
 * Poses must come in non-decreasing t. */
int sim_load_pose_file(const char *path, double tick_hz, sim_poses *out);

/* Reads a bake file's "poses" array (the file name is for messages). */
int sim_load_pose_array(const char *path, const json_t *arr, double tick_hz, sim_poses *out);

/* The head pose for time t: the latest pose with time <= t (the first pose before it);
 * a motion is evaluated at t. Call with non-decreasing t. */
pt_pose sim_poses_at(sim_poses *p, double t);

/* The pose record sim_poses_at(p, t) took its pose from, or NULL for a motion. */
const sim_pose *sim_poses_record(const sim_poses *p);

void sim_poses_free(sim_poses *p);

#endif
