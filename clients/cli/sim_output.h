/* `ponytail sim` outputs: frames as JSON lines or CSV, written as they are produced, and
 * the --summary metrics, accumulated per tick in constant memory. */
#ifndef PONYTAIL_CLI_SIM_OUTPUT_H
#define PONYTAIL_CLI_SIM_OUTPUT_H

#include <stdint.h>
#include <stdio.h>

#include "ponytail/instance.h"
#include "ponytail/types.h"
#include "sim_tips.h"

typedef enum sim_format { SIM_FORMAT_JSONL = 0, SIM_FORMAT_CSV = 1 } sim_format;

/* Where the points of the instance live: strand s has points[s] points starting at
 * index first[s] of the flat array pt_world_read_points() fills. */
typedef struct sim_layout {
	int strands, total;
	int points[PT_MAX_STRANDS], first[PT_MAX_STRANDS];
} sim_layout;

/* The shortest decimal that reads back as the same float (non_finite where it is NaN or
 * infinite), and a JSON array of n of them (null for a non-finite one): also `watch`'s. */
void sim_put_float(FILE *out, float f, const char *non_finite);
void sim_put_vec(FILE *out, const float *v, int n);

/* CSV: the header line "tick,t,strand,point,x,y,z". JSON lines: nothing. */
void sim_write_header(FILE *out, sim_format fmt);

/* One frame: the frame JSON (server/README.md) {"tick", "t", "state_hash", "head": {"p",
 * "q"}, "strands"} on one line (state_hash: pt_world_state_hash after the tick, 16
 * lowercase hex digits), or one CSV row per point (no hash). Non-finite coordinates are
 * written as null / nan. */
void sim_write_frame(FILE *out, sim_format fmt, int tick, double t, uint64_t state_hash,
                     const pt_pose *head, const sim_layout *lay, const pt_vec3 *pts);

typedef struct sim_metrics {
	const pt_instance_def *def; /* borrowed */
	sim_layout lay;
	double tick_hz;
	int ticks;
	double max_penetration, max_segment_error, max_tip_speed;
	long nan_count;               /* points with a non-finite coordinate, over all frames */
	int head_stop_tick;           /* last tick whose pose differs from the previous one */
	int last_fast_tick;           /* last tick where some tip moved at >= 1 cm/s (-1: none) */
	pt_vec3 tips[PT_MAX_STRANDS]; /* tip positions of the previous frame */
	pt_pose prev_head;
	sim_tips tip; /* head-frame tip figures: sigma, speed, damping ratio */
	pt_pose bone_frame[PT_MAX_COLLIDERS]; /* bone-attached colliders: their bone's pose at
	                                        the frame being added (the caller's to set) */
} sim_metrics;

/* `initial` holds the points right after creation (before tick 0), head at `head0`. */
void sim_metrics_init(sim_metrics *m, const pt_instance_def *def, const sim_layout *lay,
                      double tick_hz, const pt_pose *head0, const pt_vec3 *initial);

/* Accounts for the frame of `tick` (ticks come in order 0, 1, 2, ...). */
void sim_metrics_add(sim_metrics *m, int tick, const pt_pose *head, const pt_vec3 *pts);

/* Prints the summary object on one line; see `ponytail sim --help` for the fields. */
void sim_metrics_print(const sim_metrics *m, FILE *out, int substeps);

#endif
