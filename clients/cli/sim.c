/* `ponytail sim`: runs one instance offline under core's tick contract (core/README.md "The
 * tick contract") and writes a frame per tick (or a summary). The bake tool: same inputs,
 * same frames as the server. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "commands.h"
#include "ponytail/motion.h"
#include "ponytail/world.h"
#include "sim_input.h"
#include "sim_output.h"

#define MAX_TICKS 100000000L

static const char usage_text[] =
    "usage: ponytail sim INSTANCE.json [--poses FILE.jsonl | --motion NAME [--amplitude A]\n"
    "                    [--period S]] [--ticks N] [--tick-hz HZ] [--substeps K]\n"
    "                    [--format jsonl|csv] [--summary]\n"
    "\n"
    "Runs the instance offline and writes one frame per tick to stdout. Tick k sets the\n"
    "head to its pose at t = k / tick_hz and advances one tick; frame k is the state after.\n"
    "The instance is created (and prewarmed) with the head at its pose for t = 0.\n"
    "\n"
    "INSTANCE.json    an instance definition (core/SCHEMA.md), or a bake file holding\n"
    "                 \"instance\" and optionally \"poses\", \"tick_hz\", \"substeps\"\n"
    "--poses FILE     head poses: JSON lines {\"t\": s, \"p\": [x,y,z], \"q\": [x,y,z,w]}\n"
    "                 and optionally \"v\": [m/s] and \"w\": [rad/s, world axes]: the head\n"
    "                 is then extrapolated from the pose (at most 50 ms, then held)\n"
    "                 (\"tick\": k instead of \"t\" means t = k / tick_hz), or a JSON file\n"
    "                 with a \"poses\" array. Each pose holds until the next; the last\n"
    "                 one holds to the end. \"bones\": {\"chest\": {\"p\": [..], \"q\": [..]}}\n"
    "                 gives body bones' world poses (colliders attached to them move;\n"
    "                 each is held until the next line that has it)\n"
    "--motion NAME    still, shake, nod, jump, circle, stress or jog (default: the bake\n"
    "                 file's poses, else still). jog: running in place at 2.8 steps/s,\n"
    "                 vertical bob A (1 - cos) at the step rate, lateral sway A/2 at\n"
    "                 half of it, for --period seconds (whole strides), then still\n"
    "--amplitude A    shake/nod: degrees [0, 180]; jump: peak g [0, 50]; circle:\n"
    "                 radius in m [0, 10]; jog: bob in m [0, 0.2]. Default 45, 30,\n"
    "                 2.5, 0.3, 0.03\n"
    "--period S       seconds per cycle, [0.01, 3600]; jog: seconds of running.\n"
    "                 Default 0.6, 0.4, 0.5, 2; jog 5\n"
    "--ticks N        ticks to run, [1, 100000000]. Default: the number of poses, else 600\n"
    "--tick-hz HZ     ticks per second, [1, 1000]. Default: the bake file's, else 60\n"
    "--substeps K     substeps per tick, [1, 16]; overrides the instance's \"substeps\".\n"
    "                 Default: the instance's, else the bake file's, else 4\n"
    "--format F       jsonl (default): {\"tick\",\"t\",\"state_hash\",\"head\":{\"p\",\"q\"},\n"
    "                 \"strands\":[[[x,y,z],...],...]} per line, world metres, strands[s][0]\n"
    "                 = anchor; state_hash: the instance's state hash after the tick (16\n"
    "                 hex digits; the daemon's REST frame has the same for the same inputs);\n"
    "                 csv: header tick,t,strand,point,x,y,z then one row per point\n";
/* split in two: C11 compilers need only support 4095-byte string literals */
static const char usage_summary[] =
    "--summary        print one JSON object instead of frames: ticks, tick_hz, substeps,\n"
    "                 strands, points, max_penetration_m (deepest point inside a collider\n"
    "                 it sees, counting its radius / hit_radius), max_segment_error_ratio\n"
    "                 (max |len - rest| / rest over every segment, rest its length in the\n"
    "                 strand's rest shape: \"rest\" when given, else segment_length),\n"
    "                 max_tip_speed_mps, head_stop_s (time of the last tick whose pose\n"
    "                 differs from the one before), settle_s (time from head_stop_s\n"
    "                 until every tip stays under 1 cm/s; null if the head or a tip\n"
    "                 still moves at the end), nan_count (points with a non-finite\n"
    "                 coordinate, over all frames). Then the mass-spring\n"
    "                 article's figures, with d = the tip in the head's frame,\n"
    "                 q^-1 (tip - head position): max_tip_speed_head_mps (max |d_k -\n"
    "                 d_k-1| * tick_hz), tip_sigma_m (sqrt(mean |d - mean d|^2) from the\n"
    "                 first tick whose pose differs from the one before to head_stop_s;\n"
    "                 null if the head never moves), damping_ratio (of the tip's decay:\n"
    "                 d from head_stop_s on, at most 10 s, minus its last value,\n"
    "                 projected on its largest excursion; the extreme of each half-cycle\n"
    "                 is a turning point a_j, unless it is the frame of head_stop_s;\n"
    "                 from the largest one on, while |a_j| >= 0.05 mm and shrinks, the\n"
    "                 least-squares slope of ln|a_j| per turning point is -delta/2,\n"
    "                 delta the log decrement per period, zeta = delta / sqrt(4 pi^2 +\n"
    "                 delta^2); null without 2 such turning points or when settle_s is\n"
    "                 null),\n"
    "                 decay_turning_points (how many were fitted). With several\n"
    "                 strands, sigma and zeta are of the strand with the largest sigma\n"
    "\n"
    "Exit status: 0 ok, 1 bad or unreadable input file, 2 bad flag or flag value.\n";

typedef struct sim_opts {
	const char *instance, *poses, *motion;
	double amplitude, period, tick_hz;
	long ticks, substeps;
	int has_amplitude, has_period, summary;
	sim_format format;
} sim_opts;

#define USAGE_ERR(...) (fprintf(stderr, "ponytail sim: " __VA_ARGS__), -1)

/* 0: run; 1: --help printed; -1: usage error printed. */
static int parse_args(int argc, char **argv, sim_opts *o)
{
	static const char *const formats[] = {"jsonl", "csv", NULL};
	static const char *const motions[] = {"still",  "shake",  "nod", "jump",
	                                      "circle", "stress", "jog", NULL};
	const char *v;
	int r, only_files = 0;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (only_files || a[0] != '-' || a[1] == '\0') {
			if (o->instance)
				return USAGE_ERR(
				    "unexpected argument '%s' (one INSTANCE.json only)\n", a);
			o->instance = a;
		} else if (strcmp(a, "--") == 0) {
			only_files = 1;
		} else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
			fputs(usage_text, stdout), fputs(usage_summary, stdout);
			return 1;
		} else if ((r = cli_switch("sim", "--summary", a)) != 0) {
			if (r < 0)
				return -1;
			o->summary = 1;
		} else if ((r = cli_flag("sim", "--poses", argc, argv, &i, &v)) != 0) {
			if (r < 0)
				return -1;
			o->poses = v;
		} else if ((r = cli_flag("sim", "--motion", argc, argv, &i, &v)) != 0) {
			if (r < 0 || cli_parse_choice("sim", "--motion", v, motions) < 0)
				return -1;
			o->motion = v;
		} else if ((r = cli_flag("sim", "--amplitude", argc, argv, &i, &v)) != 0) {
			if (r < 0 || cli_parse_real("sim", "--amplitude", v, 0, 180, &o->amplitude))
				return -1;
			o->has_amplitude = 1;
		} else if ((r = cli_flag("sim", "--period", argc, argv, &i, &v)) != 0) {
			if (r < 0 || cli_parse_real("sim", "--period", v, 0.01, 3600, &o->period))
				return -1;
			o->has_period = 1;
		} else if ((r = cli_flag("sim", "--ticks", argc, argv, &i, &v)) != 0) {
			if (r < 0 || cli_parse_int("sim", "--ticks", v, 1, MAX_TICKS, &o->ticks))
				return -1;
		} else if ((r = cli_flag("sim", "--tick-hz", argc, argv, &i, &v)) != 0) {
			if (r < 0 || cli_parse_real("sim", "--tick-hz", v, 1, 1000, &o->tick_hz))
				return -1;
		} else if ((r = cli_flag("sim", "--substeps", argc, argv, &i, &v)) != 0) {
			if (r < 0 || cli_parse_int("sim", "--substeps", v, 1, PT_MAX_SUBSTEPS, &o->substeps))
				return -1;
		} else if ((r = cli_flag("sim", "--format", argc, argv, &i, &v)) != 0) {
			int f = r < 0 ? -1 : cli_parse_choice("sim", "--format", v, formats);
			if (f < 0)
				return -1;
			o->format = (sim_format)f;
		} else {
			return USAGE_ERR("unknown flag '%s' (see ponytail sim --help)\n", a);
		}
	}
	if (!o->instance)
		return USAGE_ERR("missing INSTANCE.json (see ponytail sim --help)\n");
	if (o->poses && o->motion)
		return USAGE_ERR("--poses and --motion exclude each other\n");
	if ((o->has_amplitude || o->has_period) && !o->motion)
		return USAGE_ERR("--%s needs --motion\n",
		                 o->has_amplitude ? "amplitude" : "period");
	if (o->motion && strcmp(o->motion, "stress") == 0 && (o->has_amplitude || o->has_period))
		return USAGE_ERR("--%s: the stress motion is fixed (no amplitude or period)\n",
		                 o->has_amplitude ? "amplitude" : "period");
	if (o->has_amplitude && strcmp(o->motion, "jump") == 0 && o->amplitude > 50)
		return USAGE_ERR("--amplitude: for jump, peak g in [0, 50], got %g\n",
		                 o->amplitude);
	if (o->has_amplitude && strcmp(o->motion, "circle") == 0 && o->amplitude > 10)
		return USAGE_ERR("--amplitude: for circle, radius in metres [0, 10], got %g\n",
		                 o->amplitude);
	if (o->has_amplitude && strcmp(o->motion, "jog") == 0 &&
	    o->amplitude > pt_motion_amplitude_max(PT_MOTION_JOG))
		return USAGE_ERR("--amplitude: for jog, vertical bob in metres [0, %g], got %g\n",
		                 pt_motion_amplitude_max(PT_MOTION_JOG), o->amplitude);
	return 0;
}

/* Runs the loop; 0 on success, -1 on a failure already reported. */
static int run(const sim_opts *o, pt_instance_def *def, sim_poses *poses, long ticks, int substeps)
{
	pt_world_def wd = pt_world_def_default();
	wd.prewarm_tick_hz = (float)o->tick_hz;
	wd.prewarm_substeps = substeps;
	pt_world *w = pt_world_create(&wd);
	pt_vec3 *pts = malloc(sizeof *pts * PT_MAX_JOINTS);
	pt_vec3 *initial = malloc(sizeof *pts * PT_MAX_JOINTS);
	sim_metrics *m = malloc(sizeof *m);
	sim_layout lay;
	pt_pose head = sim_poses_at(poses, 0.0);
	pt_id id = w ? pt_world_create_instance(w, def, head) : (pt_id){0, 0};
	int rc = -1;
	if (!pts || !initial || !m || pt_id_is_null(id)) {
		fprintf(stderr, "ponytail sim: out of memory\n");
		goto done;
	}
	lay.total = pt_world_shape(w, id, &lay.strands, lay.points);
	for (int s = 0, first = 0; s < lay.strands; first += lay.points[s], s++)
		lay.first[s] = first;
	pt_world_read_points(w, id, initial, lay.total);
	sim_metrics_init(m, def, &lay, o->tick_hz, &head, initial);
	if (!o->summary)
		sim_write_header(stdout, o->format);
	for (long k = 0; k < ticks; k++) {
		double t = (double)k / o->tick_hz;
		head = sim_poses_at(poses, t);
		const sim_pose *rec = sim_poses_record(poses);
		if (rec && rec->moving) /* age at the start of this tick's step */
			pt_world_set_head_motion(w, id, head, rec->v, rec->w,
			                         (float)(t - 1.0 / o->tick_hz - rec->t));
		else
			pt_world_set_head(w, id, head);
		for (int b = 0; rec && b < rec->nbones; b++)
			pt_world_set_bone_pose(w, id, poses->bone[rec->bone_at + (size_t)b],
			                       poses->bone_pose[rec->bone_at + (size_t)b]);
		pt_world_step(w, (float)(1.0 / o->tick_hz), substeps);
		pt_world_get_head(w, id, &head); /* as stepped (extrapolated) */
		pt_world_read_points(w, id, pts, lay.total);
		for (int c = 0; o->summary && c < def->collider_count; c++)
			if (def->colliders[c].attach == PT_ATTACH_BONE &&
			    !pt_world_get_bone_pose(w, id, def->colliders[c].bone, &m->bone_frame[c]))
				m->bone_frame[c] = head;
		if (o->summary)
			sim_metrics_add(m, (int)k, &head, pts);
		else
			sim_write_frame(stdout, o->format, (int)k, t,
			                o->format == SIM_FORMAT_CSV ? 0 : pt_world_state_hash(w, id),
			                &head, &lay, pts);
	}
	if (o->summary)
		sim_metrics_print(m, stdout, substeps);
	rc = 0;
done:
	free(m);
	free(initial);
	free(pts);
	pt_world_destroy(w);
	return rc;
}

int cmd_sim(int argc, char **argv)
{
	sim_opts o = {0};
	sim_instance_file bake = {0};
	sim_poses poses = {0};
	int r = parse_args(argc, argv, &o);
	if (r)
		return r > 0 ? CLI_EXIT_OK : CLI_EXIT_USAGE;
	/* A few KB; heap all the same, as the daemon does. */
	pt_instance_def *def = malloc(sizeof *def);
	int rc = CLI_EXIT_FAIL;
	if (!def || !pt_instance_def_init(def)) {
		fprintf(stderr, "ponytail sim: out of memory\n");
		goto done;
	}
	if (sim_load_instance(o.instance, def, &bake))
		goto done;
	if (o.tick_hz == 0)
		o.tick_hz = bake.tick_hz > 0 ? bake.tick_hz : 60.0;
	if (o.substeps > 0)
		def->substeps = (int)o.substeps;
	int substeps = def->substeps > 0 ? def->substeps : bake.substeps > 0 ? bake.substeps : 4;

	if (o.poses) {
		if (sim_load_pose_file(o.poses, o.tick_hz, &poses))
			goto done;
	} else if (bake.poses && !o.motion) {
		if (sim_load_pose_array(o.instance, bake.poses, o.tick_hz, &poses))
			goto done;
	} else {
		pt_motion_kind kind =
		    (pt_motion_kind)pt_motion_from_name(o.motion ? o.motion : "still");
		poses.use_motion = 1;
		poses.motion = pt_motion_default(kind);
		if (o.has_amplitude)
			poses.motion.amplitude = (float)o.amplitude;
		if (o.has_period)
			poses.motion.period = (float)o.period;
	}
	long ticks = o.ticks > 0 ? o.ticks : poses.use_motion ? 600 : (long)poses.n;
	if (ticks > MAX_TICKS)
		ticks = MAX_TICKS;
	if (run(&o, def, &poses, ticks, substeps) == 0)
		rc = CLI_EXIT_OK;
	if (fflush(stdout) != 0 || ferror(stdout)) {
		fprintf(stderr, "ponytail sim: writing the output failed\n");
		rc = CLI_EXIT_FAIL;
	}
done:
	sim_poses_free(&poses);
	sim_instance_file_free(&bake);
	pt_instance_def_fini(def);
	free(def);
	return rc;
}
